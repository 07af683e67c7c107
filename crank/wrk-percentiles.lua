-- wrk-job.sh's script for the measured run: after wrk's own report (--latency prints 50/75/90/99 %), it prints the
-- 95th percentile in the same shape ("    95%  1.23ms" as "    95%  1230.00us"), which the published comparisons
-- report and wrk's --latency leaves out. It defines no request function, so wrk keeps its static request.
done = function(summary, latency, requests)
  io.write(string.format("    95%%  %.2fus\n", latency:percentile(95)))
end
