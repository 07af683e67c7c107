#!/usr/bin/env bash
# Interleaved A/B of published LLRP builds, HTTP/1.1 keep-alive, llhttp.
# usage: ab.sh OUTDIR ROUNDS name=publishdir [name=publishdir ...]
# Per run: fresh nginx origin (crank/nginx/origin.conf) on CPU 0 :58081; fresh proxy alone on CPU 1 :58080
# (--client llhttp --engineThreads 1); wrk -t1 -c64 on CPU 0: 12 s warm-up, then 10 s measured.
# CPU us/request = proxy's delta(utime+stime) over the measured run / wrk's requests.
set -uo pipefail
out=$(realpath -m "$1"); rounds=$2; shift 2
mkdir -p "$out"; work=$(mktemp -d)
mkdir -p "$work/bodies"
sed -e "s#@WORK_DIR@#$work#g" -e "s#@LISTEN_ADDRESS@#127.0.0.1#" -e "s#@LISTEN_PORT@#58081#" -e "s#@LISTEN_SSL@##" -e "s#@SERVER_TLS@##" \
  "$(dirname "$0")/../../../crank/nginx/origin.conf" > "$work/origin.conf"
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{print ($14+$15)/t}' /proc/$1/stat; }
names=(); for a in "$@"; do names+=("${a%%=*}"); done
echo "round name rps us_per_req requests" > "$out/runs.txt"
for ((r=1; r<=rounds; r++)); do
  order=("$@"); if (( r % 2 == 0 )); then order=(); for ((i=$#; i>=1; i--)); do order+=("${!i}"); done; fi
  for a in "${order[@]}"; do
    name=${a%%=*}; dir=${a#*=}
    taskset -c 0 nginx -c "$work/origin.conf" -p "$work" 2> "$work/nginx.err" & ng=$!
    DOTNET_TieredPGO=1 taskset -c 1 "$dir/LLRP" --urls http://127.0.0.1:58080 --downstream http://127.0.0.1:58081 --client llhttp --engineThreads 1 > "$work/llrp.out" 2>&1 & px=$!
    for i in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:58080/ && break; sleep 0.1; done
    timeout 20 taskset -c 0 wrk -t1 -c64 -d12s http://127.0.0.1:58080/ > /dev/null
    c0=$(cpu $px)
    timeout 20 taskset -c 0 wrk -t1 -c64 -d10s http://127.0.0.1:58080/ > "$out/$name-r$r.wrk.txt"
    c1=$(cpu $px)
    req=$(grep -E "requests in" "$out/$name-r$r.wrk.txt" | awk '{print $1}')
    rps=$(grep Requests/sec "$out/$name-r$r.wrk.txt" | awk '{print $2}')
    errs=$(grep -E "Non-2xx|Socket errors" "$out/$name-r$r.wrk.txt" || true)
    us=$(awk -v a=$c0 -v b=$c1 -v n=$req 'BEGIN{printf "%.2f", (b-a)*1e6/n}')
    echo "$r $name $rps $us $req $errs" | tee -a "$out/runs.txt"
    kill $px; wait $px 2>/dev/null; kill $ng; wait $ng 2>/dev/null
    sleep 1
  done
done
rm -rf "$work"
