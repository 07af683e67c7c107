using System.Diagnostics;
using System.Text.RegularExpressions;
using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>
/// Report --headline: the README's block is what the report prints today for the sittings it names, so a change under
/// src/ after a sitting's commit shows in the README as rows measured on code that has changed since.
/// </summary>
public sealed partial class HeadlineTests : IDisposable
{
    private readonly string _repo = Directory.CreateTempSubdirectory("llrp-headline-").FullName;

    public void Dispose() => Directory.Delete(_repo, recursive: true);

    [Fact]
    public void TheReadmeHeadlineIsWhatTheReportPrintsForItsSittings()
    {
        var root = RepositoryRoot();
        var readme = File.ReadAllText(Path.Combine(root, "README.md"));
        var start = readme.IndexOf("<!-- headline:start -->\n", StringComparison.Ordinal);
        var end = readme.IndexOf("<!-- headline:end -->", StringComparison.Ordinal);
        Assert.True(start >= 0 && end > start, "README.md has no headline markers");
        var block = readme[(start + "<!-- headline:start -->\n".Length)..end];
        var sittings = SittingLink().Matches(block).Select(m => Path.Combine(root, "analysis", "results", m.Groups[1].Value)).Distinct().ToList();
        Assert.NotEmpty(sittings);
        // A shallow clone (a CI checkout of depth 1) cannot hold the sittings' commits, and so cannot tell whether src/
        // changed after them; a full clone always can, and then the block must match.
        if (GitIn(root, "rev-parse", "--is-shallow-repository").Trim() == "true")
        {
            return;
        }

        Assert.Equal(Headline.Build(sittings), block);
    }

    [Fact]
    public void TheFirstCommitUnderSrcAfterTheSittingIsNamedAndOthersAreNot()
    {
        Git("init", "-q");
        Commit("src/a.cs", "first");
        var measured = Git("rev-parse", "HEAD").Trim();
        Assert.Null(SourceAge.FirstSince(_repo, measured));

        Commit("docs/notes.md", "docs only");
        Assert.Null(SourceAge.FirstSince(_repo, measured));

        Commit("src/b.cs", "second");
        var first = Git("rev-parse", "--short", "HEAD").Trim();
        Commit("src/deep/c.cs", "third");
        var change = SourceAge.FirstSince(Path.Combine(_repo, "docs"), measured);

        Assert.NotNull(change);
        Assert.Equal(first, change.Commit);
    }

    [Fact]
    public void ACommitTheHistoryDoesNotHoldIsAnError()
    {
        Git("init", "-q");
        Commit("src/a.cs", "first");

        var e = Assert.Throws<ReportException>(() => SourceAge.FirstSince(_repo, "0123456789abcdef0123456789abcdef01234567"));
        Assert.Contains("git log", e.Message, StringComparison.Ordinal);
    }

    private void Commit(string path, string message)
    {
        var file = Path.Combine(_repo, path);
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        File.WriteAllText(file, message);
        Git("add", "-A");
        Git("-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q", "-m", message);
    }

    private string Git(params string[] args) => GitIn(_repo, args);

    private static string GitIn(string dir, params string[] args)
    {
        var start = new ProcessStartInfo("git") { RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = dir };
        foreach (var a in args)
        {
            start.ArgumentList.Add(a);
        }
        using var git = Process.Start(start)!;
        var output = git.StandardOutput.ReadToEnd();
        var error = git.StandardError.ReadToEnd();
        git.WaitForExit();
        Assert.True(git.ExitCode == 0, $"git {string.Join(' ', args)}: {error}");
        return output;
    }

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "LLRP.slnx")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"no LLRP.slnx above {AppContext.BaseDirectory}");
    }

    [GeneratedRegex(@"\(analysis/results/([^/)]+)/README\.md\)")]
    private static partial Regex SittingLink();
}
