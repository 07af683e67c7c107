using System.Globalization;

namespace LLRP.Analysis;

internal interface IScale
{
    double Map(double value);
    IReadOnlyList<double> Ticks { get; }
    string Label(double tick);
}

/// <summary>Linear axis with "nice" ticks (1, 2, 5 × 10^k steps) covering [lo, hi].</summary>
internal sealed class LinearScale : IScale
{
    private readonly double _lo, _hi, _pixelLo, _pixelHi, _step;

    public LinearScale(double lo, double hi, double pixelLo, double pixelHi, int targetTicks = 6)
    {
        if (!(hi > lo))
        {
            hi = lo + 1;
        }
        var rough = (hi - lo) / targetTicks;
        var magnitude = Math.Pow(10, Math.Floor(Math.Log10(rough)));
        var residual = rough / magnitude;
        _step = (residual < 1.5 ? 1 : residual < 3 ? 2 : residual < 7 ? 5 : 10) * magnitude;
        _lo = Math.Floor(lo / _step) * _step;
        _hi = Math.Ceiling(hi / _step) * _step;
        _pixelLo = pixelLo;
        _pixelHi = pixelHi;
        var ticks = new List<double>();
        for (var t = _lo; t <= _hi + (_step / 2); t += _step)
        {
            ticks.Add(Math.Round(t / _step) * _step);
        }
        Ticks = ticks;
    }

    public IReadOnlyList<double> Ticks { get; }

    public double Map(double value) => _pixelLo + ((value - _lo) / (_hi - _lo) * (_pixelHi - _pixelLo));

    public string Label(double tick)
    {
        if (_step >= 1)
        {
            return tick.ToString("N0", CultureInfo.InvariantCulture);
        }
        var decimals = (int)Math.Ceiling(-Math.Log10(_step));
        return tick.ToString("F" + decimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
    }
}

/// <summary>Log10 axis: ticks at 1, 2, 5 × 10^k within the range (only decades when the range is wide).</summary>
internal sealed class LogScale : IScale
{
    private readonly double _lo, _hi, _pixelLo, _pixelHi;

    public LogScale(double lo, double hi, double pixelLo, double pixelHi)
    {
        lo = Math.Max(lo, 1e-6);
        hi = Math.Max(hi, lo * 1.5);
        _lo = Math.Log10(lo);
        _hi = Math.Log10(hi);
        var loDecade = Math.Floor(_lo);
        var hiDecade = Math.Ceiling(_hi);
        double[] multiples = hiDecade - loDecade > 4 ? [1] : [1, 2, 5];
        var ticks = new List<double>();
        for (var d = loDecade; d <= hiDecade; d++)
        {
            foreach (var m in multiples)
            {
                var t = m * Math.Pow(10, d);
                var lt = Math.Log10(t);
                if (lt >= _lo - 1e-9 && lt <= _hi + 1e-9)
                {
                    ticks.Add(t);
                }
            }
        }
        Ticks = ticks;
        _pixelLo = pixelLo;
        _pixelHi = pixelHi;
    }

    public IReadOnlyList<double> Ticks { get; }

    public double Map(double value) => _pixelLo + ((Math.Log10(Math.Max(value, 1e-9)) - _lo) / (_hi - _lo) * (_pixelHi - _pixelLo));

    public string Label(double tick) => tick >= 1
        ? tick.ToString("N0", CultureInfo.InvariantCulture)
        : tick.ToString("0.###", CultureInfo.InvariantCulture);
}
