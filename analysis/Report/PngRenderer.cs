using System.Diagnostics;

namespace LLRP.Analysis;

/// <summary>
/// SVG → PNG with rsvg-convert (Debian librsvg2-bin): no .NET raster library is on this project's NuGet source
/// (ScottPlot, SkiaSharp, OxyPlot, SixLabors.ImageSharp all answer 404), and System.Drawing does not run on Linux.
/// </summary>
internal sealed class PngRenderer
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);

    private PngRenderer(string? tool, bool disabled)
    {
        Tool = tool;
        Disabled = disabled;
    }

    /// <summary>--no-png: SVG only, on purpose.</summary>
    public bool Disabled { get; }

    /// <summary>Path of rsvg-convert, or null when it is not installed (the report then links the SVGs).</summary>
    public string? Tool { get; }

    public static PngRenderer Find(bool disabled)
    {
        if (disabled)
        {
            return new PngRenderer(null, disabled: true);
        }
        var path = Environment.GetEnvironmentVariable("PATH") ?? "";
        foreach (var dir in path.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
        {
            var candidate = Path.Combine(dir, "rsvg-convert");
            if (File.Exists(candidate))
            {
                return new PngRenderer(candidate, disabled: false);
            }
        }
        return new PngRenderer(null, disabled: false);
    }

    /// <summary>Writes <paramref name="png"/> from <paramref name="svg"/>; returns an error text, or null on success.</summary>
    public string? Render(string svg, string png)
    {
        if (Tool is null)
        {
            return "rsvg-convert not found";
        }
        var info = new ProcessStartInfo(Tool)
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        // 1.5x zoom keeps 11-12 px labels legible in a Markdown viewer.
        foreach (var a in new[] { "--zoom", "1.5", "--background-color", "white", "--format", "png", "--output", png, svg })
        {
            info.ArgumentList.Add(a);
        }
        using var p = Process.Start(info) ?? throw new InvalidOperationException($"could not start {Tool}");
        var stderr = p.StandardError.ReadToEndAsync();
        if (!p.WaitForExit(Limit))
        {
            p.Kill(entireProcessTree: true);
            return $"{Tool} took longer than {Limit.TotalSeconds} s";
        }
        return p.ExitCode == 0 && File.Exists(png) ? null : $"{Tool} exited with {p.ExitCode}: {stderr.Result.Trim()}";
    }
}
