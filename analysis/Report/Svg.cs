using System.Globalization;
using System.Security;
using System.Text;

namespace LLRP.Analysis;

/// <summary>Minimal SVG writer: the few shapes the charts need, with invariant number formatting.</summary>
internal sealed class Svg
{
    public const string FontFamily = "DejaVu Sans, Liberation Sans, Arial, sans-serif";
    private readonly StringBuilder _sb = new();

    public Svg(int width, int height)
    {
        Width = width;
        Height = height;
        _sb.Append(CultureInfo.InvariantCulture,
            $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"{FontFamily}\">\n");
        Rect(0, 0, width, height, "#ffffff");
    }

    public int Width { get; }
    public int Height { get; }

    private static string N(double v) => v.ToString("0.##", CultureInfo.InvariantCulture);

    public void Line(double x1, double y1, double x2, double y2, string stroke, double width = 1, string? dash = null) =>
        _sb.Append(CultureInfo.InvariantCulture,
            $"<line x1=\"{N(x1)}\" y1=\"{N(y1)}\" x2=\"{N(x2)}\" y2=\"{N(y2)}\" stroke=\"{stroke}\" stroke-width=\"{N(width)}\"{(dash is null ? "" : $" stroke-dasharray=\"{dash}\"")}/>\n");

    public void Rect(double x, double y, double w, double h, string fill, string? stroke = null) =>
        _sb.Append(CultureInfo.InvariantCulture,
            $"<rect x=\"{N(x)}\" y=\"{N(y)}\" width=\"{N(Math.Max(0, w))}\" height=\"{N(Math.Max(0, h))}\" fill=\"{fill}\"{(stroke is null ? "" : $" stroke=\"{stroke}\"")}/>\n");

    public void Circle(double cx, double cy, double r, string fill) =>
        _sb.Append(CultureInfo.InvariantCulture, $"<circle cx=\"{N(cx)}\" cy=\"{N(cy)}\" r=\"{N(r)}\" fill=\"{fill}\" stroke=\"#ffffff\" stroke-width=\"1\"/>\n");

    public void Polyline(IEnumerable<(double X, double Y)> points, string stroke, double width = 2)
    {
        var p = string.Join(' ', points.Select(q => N(q.X) + "," + N(q.Y)));
        _sb.Append(CultureInfo.InvariantCulture, $"<polyline points=\"{p}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{N(width)}\" stroke-linejoin=\"round\"/>\n");
    }

    public void Text(double x, double y, string text, double size = 12, string anchor = "middle", string color = "#222222",
        bool bold = false, double rotate = 0)
    {
        var transform = rotate == 0 ? "" : $" transform=\"rotate({N(rotate)} {N(x)} {N(y)})\"";
        _sb.Append(CultureInfo.InvariantCulture,
            $"<text x=\"{N(x)}\" y=\"{N(y)}\" font-size=\"{N(size)}\" text-anchor=\"{anchor}\" fill=\"{color}\"{(bold ? " font-weight=\"bold\"" : "")}{transform}>{SecurityElement.Escape(text)}</text>\n");
    }

    /// <summary>Rough advance width of DejaVu Sans (about 0.6 em per character) for layout decisions.</summary>
    public static double TextWidth(string text, double size) => text.Length * size * 0.6;

    public override string ToString() => _sb + "</svg>\n";
}
