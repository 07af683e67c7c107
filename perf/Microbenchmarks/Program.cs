using BenchmarkDotNet.Running;
using Microbenchmarks;

// Named by a benchmark class: LLRP's own top-level Program is visible here too (InternalsVisibleTo).
BenchmarkSwitcher.FromAssembly(typeof(CodecBenchmarks).Assembly).Run(args);
