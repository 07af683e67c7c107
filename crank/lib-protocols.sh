# Sourced by crank/run-local.sh: the HTTP/2 plumbing of a run, kept out of the runner's own code. What the proxy's
# listener speaks (--protocols, benchmarks.yml's protocols), how each kind of proxy is told, the h2load load job's
# command, and LLRP's front end (--front-end, benchmarks.yml's frontEnd).
#
# Protocols: http1, h2 or http1,h2, the values LLRP's --protocols takes. On https ALPN chooses among them; on http, h2
# alone is prior-knowledge h2c and http1,h2 is refused (a cleartext listener cannot offer a choice). Empty: each proxy's
# default (HTTP/1.1 on http; nothing is passed, so a proxy without the option runs as before), except under the h2load
# load, which needs h2: http1,h2 on https (LLRP's default there), h2 on http. The proxy speaks HTTP/1.1 to the origin
# in every case.

# LLRP's option that selects its front end (the Kestrel HTTP/1.1 front end: --front-end kestrel, scenario
# llrp-kestrel-h1). One name, here, so that a rename of LLRP's option is one edit.
LLRP_FRONT_END_OPTION=--frontEnd

# protocols_resolve LOAD SCHEME PROTOCOLS: prints the protocols the run's proxies get (empty: pass nothing), or a
# message on stderr and returns 1 when the combination cannot work.
protocols_resolve() {
  local load="$1" scheme="$2" p="$3"
  case "$p" in
    ""|http1|h2|http1,h2) ;;
    h2,http1) p=http1,h2 ;;
    *) echo "--protocols must be http1, h2 or http1,h2, not '$p'" >&2; return 1 ;;
  esac
  if [ -z "$p" ] && [ "$load" = h2load ]; then
    if [ "$scheme" = https ]; then p=http1,h2; else p=h2; fi
  fi
  if [ "$scheme" = http ] && [ "$p" = http1,h2 ]; then
    echo "--protocols http1,h2 needs --server-scheme https (ALPN chooses); on http choose http1 or h2 (prior-knowledge h2c)" >&2; return 1
  fi
  if [ "$load" = h2load ] && [ "$p" = http1 ]; then
    echo "--load h2load speaks HTTP/2: --protocols http1 leaves the proxy nothing it can answer" >&2; return 1
  fi
  if [ "$load" != h2load ] && [ "$scheme" = http ] && [ "$p" = h2 ]; then
    echo "--protocols h2 on http is prior-knowledge h2c only, and --load $load speaks HTTP/1.1: use --load h2load" >&2; return 1
  fi
  echo "$p"
}

# kestrel_protocols PROTOCOLS: the value of Kestrel's EndpointDefaults:Protocols (full YARP, HttpClientProxy).
kestrel_protocols() {
  case "$1" in
    http1) echo Http1 ;;
    h2) echo Http2 ;;
    http1,h2) echo Http1AndHttp2 ;;
  esac
}

# protocols_proxy_args KIND APP PROTOCOLS FRONT_END: sets PROTO_ENV (variables for the nginx and HAProxy jobs) and
# PROTO_ARGS (arguments for a .NET proxy) for one run. KIND: nginx, haproxy, dotnet; APP: llrp, yarp, httpclientproxy.
protocols_proxy_args() {
  local kind="$1" app="$2" p="$3" front_end="$4"
  PROTO_ENV=() PROTO_ARGS=()
  if [ -n "$p" ]; then
    case "$kind" in
      nginx|haproxy) PROTO_ENV=("PROTOCOLS=$p") ;;
      dotnet)
        if [ "$app" = llrp ]; then PROTO_ARGS=(--protocols "$p")
        else PROTO_ARGS=("--Kestrel:EndpointDefaults:Protocols=$(kestrel_protocols "$p")"); fi ;;
    esac
  fi
  if [ -n "$front_end" ] && [ "$app" = llrp ]; then PROTO_ARGS+=("$LLRP_FRONT_END_OPTION" "$front_end"); fi
  return 0
}

# protocols_curl_args PROTOCOLS SCHEME: sets CURL_PROTO, curl's options for the first request to a proxy that speaks
# PROTOCOLS (h2c needs prior knowledge; on https curl offers h2 in ALPN and takes it when the proxy does).
protocols_curl_args() {
  case "$1/$2" in
    h2/http) CURL_PROTO=(--http2-prior-knowledge) ;;
    h2/https|http1,h2/https) CURL_PROTO=(--http2) ;;
    *) CURL_PROTO=() ;;
  esac
}

# h2load_load_cmd CRANK_DIR WARMUP DURATION THREADS CONNECTIONS STREAMS RATE URL [JOB OPTION]...: sets LOAD_CMD, the h2load
# job's command (closed loop, or open loop at RATE requests/s when RATE is not empty).
h2load_load_cmd() {
  local dir="$1" warmup="$2" duration="$3" threads="$4" connections="$5" streams="$6" rate="$7" url="$8"
  shift 8
  LOAD_CMD=("$dir/h2load-job.sh" -w "$warmup" -d "$duration" -t "$threads" -c "$connections" -m "$streams")
  [ -z "$rate" ] || LOAD_CMD+=(--rate "$rate")
  LOAD_CMD+=("$@" "$url")
}
