#!/usr/bin/env bash
# DeepReduce on the real traces (../shared/data/grads), the paper's two
# comparisons:
#  1. Table 2 (an inherently sparse model): the sparse spam gradient as it
#     is, QSGD + Bloom-P0 and poly + Bloom-P2 next to SketchML — relative
#     data volume against dense float32 (4 B x 2^20, what an uncompressed
#     allreduce sends) and against key/value pairs (8 B per nonzero).
#  2. Figure 10: the CNN gradient of one iteration (all six tensors) through
#     top-r at 1%, every index codec with every value codec: index and value
#     bytes separately, encode and decode time, error.
# Usage: bench/deepreduce.sh [BUILD_DIR] [--json] [--mtu N]
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
mtu=1500
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json mtu=" "$@"
bench_codec_inputs

# One gw-bench run as a JSON line with the input's name and the row's
# derived numbers (times in microseconds per tensor, relative volumes).
run() {  # table, label, args...
  local table=$1 label=$2; shift 2
  "$bench" codec "$@" --mtu "$mtu" --min-time 0.2 --json --no-ef | python3 -c '
import json, sys
r = json.load(sys.stdin)
table, label = sys.argv[1], sys.argv[2]
r["table"], r["label"] = table, label
inb = r["input_bytes"]
r["encode_us"] = inb / (r["encode_gbps"] * 1e9) * 1e6 if r["encode_gbps"] else None
r["decode_us"] = inb / (r["decode_gbps"] * 1e9) * 1e6 if r["decode_gbps"] else None
if table == "spam":
    r["rel_dense"] = r["bytes"] / (4.0 * 2**20)
    r["rel_pairs"] = r["bytes"] / inb
print(json.dumps(r))' "$table" "$label"
}

bench_tmp
rows=$tmp/rows
{
  for f in 0.6 0.1 0.01 0.001; do
    run spam "DR qsgd(s=127,b=512) + bloom-P0 fpr=$f" --keys "$sk" --values "$sv" \
      --codec "deepreduce:index=bloom,policy=p0,fpr=$f,value=qsgd,levels=127,bucket=512"
  done
  for f in 0.01 0.001; do
    run spam "DR poly + bloom-P2 fpr=$f" --keys "$sk" --values "$sv" \
      --codec "deepreduce:index=bloom,policy=p2,fpr=$f,value=poly"
  done
  # The paper's p = ceil(2 sqrt(M)) is 1 at gradient scale: more pieces
  run spam "DR poly(32 pieces, d=1) + bloom-P2 fpr=0.01" --keys "$sk" --values "$sv" \
    --codec "deepreduce:index=bloom,policy=p2,fpr=0.01,value=poly,pieces=32,degree=1"
  run spam "DR qsgd(s=127,b=512) + delta" --keys "$sk" --values "$sv" \
    --codec "deepreduce:index=delta,value=qsgd,levels=127,bucket=512"
  run spam "sketchml (q=64)" --keys "$sk" --values "$sv" --codec sketchml --param quantiles=64
  run spam "sketchml (default)" --keys "$sk" --values "$sv" --codec sketchml
  run spam "raw key/value pairs" --keys "$sk" --values "$sv" --codec raw
  for idx in raw rle delta bloom,policy=p0 bloom,policy=p1 bloom,policy=p2; do
    for val in f32 deflate qsgd poly dexp; do
      run cnn "${idx/,policy=/-} + $val" --input "$dense" \
        --codec "deepreduce:index=$idx,value=$val,sparsifier=topr,fraction=0.01"
    done
  done
  run cnn "topk 1% (no DeepReduce)" --input "$dense" --codec topk --param fraction=0.01
} > "$rows"

if [ $json = 1 ]; then
  cat "$rows"
  exit 0
fi
python3 - "$rows" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("Spam trace it010 (2^20 features, %d nonzeros), inherently sparse:" % rows[0]["elements"])
print("%-42s %9s %9s %9s %9s" % ("method", "bytes", "vs dense", "vs pairs", "rel_l2"))
for r in rows:
    if r["table"] == "spam":
        print("%-42s %9d %9.4f %9.4f %9.3g" % (r["label"], r["bytes"], r["rel_dense"],
              r["rel_pairs"], r["rel_l2_err"]))
print()
print("CNN trace it100 (25,290 values), top-r 1%% (253 kept); bytes per tensor:")
print("%-30s %7s %7s %7s %7s %9s %9s %9s" % ("index + value", "frames", "index", "value",
      "total", "enc_us", "dec_us", "rel_l2"))
for r in rows:
    if r["table"] == "cnn":
        p = r.get("parts") or {}
        print("%-30s %7d %7s %7s %7d %9.1f %9.1f %9.3g" % (r["label"], r["frames"],
              p.get("keys", "-"), p.get("values", "-"), r["bytes"], r["encode_us"],
              r["decode_us"], r["rel_l2_err"]))
PY
