using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>Chart titles: wrapped so that no line is longer than the room the chart gives it.</summary>
public sealed class ChartsTests
{
    [Theory]
    [InlineData("64 connections, 10 B responses (path /); bar = median, whiskers = min–max over rounds", 40)]
    [InlineData("short", 40)]
    [InlineData("a b c d e f g h i j k l m n o p q r s t u v w x y z", 7)]
    public void WrapKeepsEveryWordAndNoLineLongerThanTheLimit(string text, int max)
    {
        var lines = Charts.Wrap(text, max).Split('\n');

        Assert.All(lines, l => Assert.True(l.Length <= max, $"'{l}' is longer than {max}"));
        Assert.Equal(text, string.Join(' ', lines));
    }

    [Fact]
    public void AWordLongerThanTheLimitStaysWholeOnItsOwnLine() =>
        Assert.Equal("a\nllrp-httpclientwithcontext\nb", Charts.Wrap("a llrp-httpclientwithcontext b", 10));
}
