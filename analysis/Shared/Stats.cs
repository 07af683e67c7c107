namespace LLRP.Analysis;

/// <summary>The statistics the runner and the report take over rounds: one definition, linked into each project,
/// so a verdict the runner reaches and the figure the report prints are the same median.</summary>
internal static class Stats
{
    /// <summary>Median of the finite values present (the mean of the middle two of an even count); null when none.</summary>
    public static double? Median(IEnumerable<double?> values)
    {
        var v = values.OfType<double>().Where(double.IsFinite).Order().ToArray();
        return v.Length == 0 ? null : v.Length % 2 == 1 ? v[v.Length / 2] : (v[(v.Length / 2) - 1] + v[v.Length / 2]) / 2;
    }

    /// <inheritdoc cref="Median(IEnumerable{double?})"/>
    public static double? Median(IEnumerable<double> values) => Median(values.Select(v => (double?)v));

    /// <summary>Median of one named figure over runs' figures (a run without it left out).</summary>
    public static double? Median(IEnumerable<IReadOnlyDictionary<string, double>> figures, string figure) =>
        Median(figures.Select(f => f.TryGetValue(figure, out var v) ? v : (double?)null));

    public static double? Min(IEnumerable<double?> values) => values.OfType<double>().Where(double.IsFinite).Select(d => (double?)d).Min();

    public static double? Max(IEnumerable<double?> values) => values.OfType<double>().Where(double.IsFinite).Select(d => (double?)d).Max();

    public static double? Sum(IEnumerable<double?> values)
    {
        var v = values.OfType<double>().ToArray();
        return v.Length == 0 ? null : v.Sum();
    }
}
