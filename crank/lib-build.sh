# Sourced by crank/runner.sh and crank/jobs.sh: build a C# tool of the repository when its build is missing or one of
# its sources (its folder, analysis/Shared, which the tools link, and the central props) is newer, so that every run
# runs what the checkout holds.
# build_when_stale DIR NAME: builds DIR/NAME.csproj (Release, output DIR/bin/Release/net10.0/NAME.dll), one build at a
# time (two runs started together must not write the same obj/ folder); log DIR/bin/build.log. Returns 1 when it fails.
build_when_stale() {
  local dir="$1" name="$2" dll stale
  dll="$dir/bin/Release/net10.0/$name.dll"
  stale="$([ -f "$dll" ] || echo missing)"
  [ -n "$stale" ] || stale="$(find "$dir" "$dir"/../../analysis/Shared "$dir"/../../Directory.*.props -newer "$dll" \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' \) \
    -not -path '*/bin/*' -not -path '*/obj/*' -print -quit 2> /dev/null)"
  [ -n "$stale" ] || return 0
  mkdir -p "$dir/bin"
  echo "${name,,}: building $dir (log: $dir/bin/build.log)" >&2
  if ! (flock 9 && dotnet build "$dir/$name.csproj" -c Release -nologo -v quiet > "$dir/bin/build.log" 2>&1) 9> "$dir/bin/build.lock"; then
    tail -n 20 "$dir/bin/build.log" >&2
    echo "${name,,}: $dir does not build ($dir/bin/build.log)" >&2
    return 1
  fi
}
