global using System.Buffers;
