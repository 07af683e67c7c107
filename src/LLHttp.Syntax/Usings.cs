global using System.Buffers;
global using System.Diagnostics;
global using System.Runtime.CompilerServices;
global using System.Text;

[module: SkipLocalsInit]
