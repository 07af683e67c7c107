# Shared by fuzz/run.sh, fuzz/smoke.sh and fuzz/cmin.sh (sourced, not run): afl++ installation, the instrumented build,
# afl-fuzz's environment and one bounded afl-fuzz run.

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$FUZZ_DIR")"
ARTIFACTS="$ROOT/artifacts/fuzz"
BUILD="$ARTIFACTS/build"
INSTRUMENTED="$ARTIFACTS/instrumented"
TARGETS=(request-head request-body response host command-line differential h2-frames hpack h2-connection h2-client-connection)

# afl-fuzz's per-input timeout in ms. A target's run is microseconds once the .NET runtime has jitted it; 2 s leaves
# room for a loaded shared machine, and anything slower is a hang worth triage.
AFL_TIMEOUT_MS=${AFL_TIMEOUT_MS:-2000}

# The dictionary of each target.
dict_of() {
  case "$1" in
    host) echo "$FUZZ_DIR/dict/host.dict" ;;
    command-line) echo "$FUZZ_DIR/dict/command-line.dict" ;;
    h2-frames | hpack | h2-connection | h2-client-connection) echo "$FUZZ_DIR/dict/h2.dict" ;;
    *) echo "$FUZZ_DIR/dict/http.dict" ;;
  esac
}

# afl++ from the distribution (Debian's package "afl++"), installed when missing.
ensure_afl() {
  if command -v afl-fuzz > /dev/null; then
    return
  fi
  echo "== installing afl++ (apt)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq afl++ > /dev/null
}

# Builds the fuzz project and instruments a fresh copy of the assemblies under test, LLRP, LLHttp and LLHttp2, with SharpFuzz
# (the tool pinned in .config/dotnet-tools.json). LLRP.Fuzz itself stays uninstrumented: its Main runs before the
# fork server maps afl's coverage memory, and instrumented code there would write to no memory at all. SharpFuzz
# refuses an assembly it already instrumented, so the build output is never instrumented in place.
build_instrumented() {
  echo "== building and instrumenting the fuzz targets"
  (cd "$ROOT" && dotnet tool restore > /dev/null)
  dotnet build "$FUZZ_DIR/LLRP.Fuzz/LLRP.Fuzz.csproj" -c Release -nologo -v quiet -o "$BUILD"
  rm -rf "$INSTRUMENTED"
  cp -r "$BUILD" "$INSTRUMENTED"
  for assembly in LLRP.dll LLHttp.dll LLHttp2.dll; do
    (cd "$ROOT" && dotnet sharpfuzz "$INSTRUMENTED/$assembly" > /dev/null)
  done
}

# What afl-fuzz needs in a container.
afl_environment() {
  # The CPU frequency governor cannot be read or set in a container; the check only warns about speed.
  export AFL_SKIP_CPUFREQ=1
  # Containers pipe core dumps to a handler afl-fuzz cannot change (/proc/sys/kernel/core_pattern); SharpFuzz reports
  # a crash through the fork server's status, not through a core dump, so nothing is missed.
  export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
  # The binary afl-fuzz starts is dotnet, which carries no afl instrumentation of its own: SharpFuzz's fork server and
  # the instrumented assemblies supply the coverage map.
  export AFL_SKIP_BIN_CHECK=1
  # No curses screen in scripts and CI logs; one status line now and then instead.
  export AFL_NO_UI=1
  # A shared machine: do not pin a core another process may need.
  export AFL_NO_AFFINITY=1
  # The runtime's own crash dumps (createdump) would make every crash take seconds.
  export DOTNET_DbgEnableMiniDump=0
}

# run_afl TARGET SECONDS INPUT_DIR OUTPUT_DIR [extra afl-fuzz arguments...]: one bounded, lowest-priority afl-fuzz run.
run_afl() {
  local target=$1 seconds=$2 input=$3 output=$4
  shift 4
  # Each run starts from its input directory: an old output directory is replaced, never resumed.
  rm -rf "$output"
  mkdir -p "$(dirname "$output")"
  nice -n 19 afl-fuzz -i "$input" -o "$output" -V "$seconds" -t "$AFL_TIMEOUT_MS" -m none -x "$(dict_of "$target")" "$@" \
    -- "$(command -v dotnet)" "$INSTRUMENTED/LLRP.Fuzz.dll" "$target"
}

# stat OUTPUT_DIR NAME: one figure of afl-fuzz's fuzzer_stats.
stat() {
  sed -nE "s/^$2 +: (.*)$/\1/p" "$1/default/fuzzer_stats"
}

# Counts what afl-fuzz saved as crashes and hangs (README.txt aside).
findings_of() {
  find "$1/default/crashes" "$1/default/hangs" -type f ! -name README.txt 2> /dev/null | wc -l
}
