/* Private to the reliable stream (stream.c, stream_wire.c). */
#ifndef GW_STREAM_INTERNAL_H
#define GW_STREAM_INTERNAL_H

/* Registers DATA and ACK with the packet header (idempotent): every
 * gw_stream_create() does, and whatever parses stream packets without a
 * stream (tests, fuzz harnesses) calls it first. 0 or GW_EINVAL. */
int gw_stream_wire_register(void);

#endif /* GW_STREAM_INTERNAL_H */
