# Sourced by the load jobs: crank's stdout statistics block, built with jq (never by string formatting, so a name or
# description with a quote or a backslash cannot break the JSON).
#
# statistics_block SOURCE: reads one measurement per line on stdin, tab-separated:
#   NAME  AGGREGATE  REDUCE  SHORT_DESCRIPTION  LONG_DESCRIPTION  FORMAT  VALUE
# (NAME "a;b" is stored by crank under both names; VALUE a number; a NAME given on several lines, e.g. with
# AGGREGATE "All", gets one metadata entry and one measurement per line, in order) and prints
#   #StartJobStatistics / {"Metadata":[...],"Measurements":[...]} / #EndJobStatistics
# Fails (status 1, nothing printed) on a line without seven fields or with a VALUE that is not a number.
statistics_block() {
  local source="$1" json
  json="$(jq -R -s -c --arg source "$source" --arg ts "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" '
    [split("\n")[] | select(length > 0) | split("\t")
     | if length != 7 then error("statistics_block: not seven tab-separated fields: \(join(" | "))") else . end
     | {name: .[0], aggregate: .[1], reduce: .[2], short: .[3], long: .[4], format: .[5], value: (.[6] | tonumber)}]
    | {Metadata: (reduce .[] as $m ([]; if any(.[]; .Name == $m.name) then . else . + [{Source: $source, Name: $m.name,
                    Aggregate: $m.aggregate, Reduce: $m.reduce, ShortDescription: $m.short, LongDescription: $m.long,
                    Format: $m.format}] end)),
       Measurements: [.[] | {Timestamp: $ts, Name: .name, Value: .value}]}')" || return 1
  printf '#StartJobStatistics\n%s\n#EndJobStatistics\n' "$json"
}
