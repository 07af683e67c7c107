# Turns crank stdout statistics blocks into one job entry of crank's --json output
# (JobResult: results, metadata, measurements, environment, variables; docs/crank-offline.md),
# aggregating each measurement the way crank's controller does: by its metadata's "aggregate"
# operation (First, Last, Avg, Sum, Median, Max, Min, Count, All, Delta = max - min). A name that
# lists several keys ("wrk/requests;http/requests") is stored under each of them, as crank does.
#
# jq -n --slurpfile blocks FILE --argjson env ENV --argjson vars VARS -f results.jq
# FILE holds zero or more {"Metadata":[...],"Measurements":[...]} objects (any key casing).

def lckeys: if type == "object" then with_entries(.key |= ascii_downcase) else . end;
def num: if type == "string" then (tonumber? // .) else . end;
def aggregate($op; $v):
  ($op | tostring | ascii_downcase) as $o
  | if ($v | length) == 0 then null
    elif $o == "all" then $v
    elif $o == "first" then $v[0]
    elif $o == "last" then $v[-1]
    elif $o == "count" then ($v | length)
    elif ($v | all(type == "number")) | not then $v[-1]
    elif $o == "avg" then ($v | add / length)
    elif $o == "sum" then ($v | add)
    elif $o == "median" then ($v | sort | .[length / 2 | floor])
    elif $o == "max" then ($v | max)
    elif $o == "min" then ($v | min)
    elif $o == "delta" then (($v | max) - ($v | min))
    else $v[-1] end;

[$blocks[] | lckeys] as $b
| [$b[] | (.metadata // [])[] | lckeys] as $meta
| [$b[] | (.measurements // [])[] | lckeys | .value = (.value | num)] as $meas
| (reduce $meta[] as $m ({}; .[$m.name] = $m)) as $byname
| (reduce $meta[] as $m ([]; if any(.[]; . == $m.name) then . else . + [$m.name] end)) as $names
| {
    results: (reduce $names[] as $n ({};
        [$meas[] | select(.name == $n) | .value] as $v
        | if ($v | length) > 0
          then aggregate($byname[$n].aggregate // "Last"; $v) as $a | reduce ($n | split(";")[]) as $k (.; .[$k] = $a)
          else . end)),
    metadata: [$names[] | $byname[.] as $m | ($m.name | split(";")[])
               | {name: ., description: ($m.shortdescription // .), format: ($m.format // "")}],
    measurements: [[$meas[] | {timestamp, name, value}]],
    environment: $env,
    variables: $vars
  }
