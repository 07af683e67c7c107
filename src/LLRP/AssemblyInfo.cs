using System.Runtime.CompilerServices;

// Buffers on the hot path are always written before they are read; zeroing them is wasted work.
[module: SkipLocalsInit]
