# Small synthetic LIBSVM data for the gw-train tests (the real data sets
# need scripts/fetch-data.sh and the network; these tests must not).
#   source gen.sh
#   gen_blobs DIR       -> DIR/blobs.{train,test}.svm: 3 classes, 20 features
#   gen_sparse DIR      -> DIR/sparse.{train,test}.svm: +-1, 300 features
# and for every test: $tmp (removed on exit), bad() to record a failure
# ($fail), field KEY to read a number of a JSON line on stdin, learning
# FILE for the records two runs of one job must print alike.
tmp=$(mktemp -d /tmp/gw-train-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
# learning records of gw-train output FILE without the wire counters and
# time, which depend on scheduling (a late result costs a re-send, never
# a different sum): what two runs of one job must print alike.
learning() { grep '"tool":"gw-train"' "$1" | grep -v summary |
  sed -E 's/"(time_s|bytes_up|bytes_down|retransmits|ratio)":[^,}]*,?//g'; }
gen_blobs() {
  awk -v dir="$1" 'BEGIN {
    srand(7)
    for (set = 0; set < 2; set++) {
      f = dir "/blobs." (set ? "test" : "train") ".svm"; n = set ? 150 : 600
      for (i = 0; i < n; i++) {
        c = i % 3; line = c
        for (j = 1; j <= 20; j++) {
          v = (rand() - 0.5) * 1.5 + (j == c + 1 ? 1.2 : 0) + (j == c + 4 ? 0.8 : 0)
          line = line " " j ":" sprintf("%.4f", v)
        }
        print line > f
      }
    }
  }'
}
gen_sparse() {
  awk -v dir="$1" 'BEGIN {
    srand(11)
    for (k = 1; k <= 300; k++) w[k] = rand() < 0.5 ? -1 : 1
    for (set = 0; set < 2; set++) {
      f = dir "/sparse." (set ? "test" : "train") ".svm"; n = set ? 300 : 1200
      for (i = 0; i < n; i++) {
        delete on; m = 0
        while (m < 13) { k = 1 + int(rand() * 300); if (!(k in on)) { on[k] = 1; m++ } }
        s = 0; nk = 0
        for (k in on) { s += w[k]; keys[++nk] = k + 0 }
        # ascending indices, as LIBSVM wants
        for (a = 1; a <= nk; a++) for (b = a + 1; b <= nk; b++)
          if (keys[b] < keys[a]) { t = keys[a]; keys[a] = keys[b]; keys[b] = t }
        line = s > 0 ? "+1" : "-1"   # 13 terms of +-1: never a tie
        for (a = 1; a <= nk; a++) line = line " " keys[a] ":0.2887"
        print line > f
      }
    }
  }'
}
