global using System.Buffers;
global using System.Diagnostics;
global using System.Diagnostics.CodeAnalysis;
global using System.Globalization;
global using System.Runtime.CompilerServices;
global using System.Runtime.InteropServices;
global using System.Text;
global using LLHttp.Sockets;
global using LLHttp.Syntax;

[module: SkipLocalsInit]
