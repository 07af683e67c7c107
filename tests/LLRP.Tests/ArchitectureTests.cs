using System.Reflection;
using System.Xml.Linq;
using ArchUnitNET.Domain.Dependencies;
using ArchUnitNET.Loader;
using LLRP.Exchanges;

namespace LLRP.Tests;

/// <summary>
/// No namespace of src/ depends on a namespace that depends on it (docs/architecture.md). The graph is read from the
/// built assemblies of every project under src/: a type depends on every type its signatures, fields, attributes and
/// method bodies name. ArchUnitNET attributes a compiler-generated type (an async state machine, a lambda's closure) to
/// the type that declares it, so each dependency counts in the namespace the source wrote it in. The same reading keeps
/// the variants away from the exchange's lifecycle (<see cref="NoVariantReachesTheExchangesLifecycle"/>).
/// </summary>
public sealed class ArchitectureTests
{
    [Fact]
    public void NoNamespaceCycleInSrc()
    {
        var graph = NamespaceGraph.Read(SourceAssemblies());
        var cycles = graph.Cycles();
        Assert.True(cycles.Count == 0, $"{cycles.Count} namespace cycle(s) in src/:\n{string.Join("\n", cycles.Select(graph.Describe))}");
    }

    [Fact]
    public void TheGraphCoversEverySourceProject()
    {
        var graph = NamespaceGraph.Read(SourceAssemblies());
        Assert.Contains("LLRP.Connections", graph.Namespaces);
        Assert.Contains("LLHttp", graph.Namespaces);
        Assert.Contains("LLHttp.Syntax", graph.Namespaces);
        Assert.Contains("LLRP.Http1", graph.EdgesFrom("LLRP.Connections"));
    }

    /// <summary>
    /// docs/architecture.md's table of folders is the layering: every namespace of LLRP has a row, uses exactly the
    /// namespaces its "depends on" cell names (each one used, none left out), and each of those sits in a row below it.
    /// The libraries under LLRP (LLHttp's assemblies) never use it.
    /// </summary>
    [Fact]
    public void NamespacesFollowTheLayerTableOfTheArchitectureDoc()
    {
        var graph = NamespaceGraph.Read(SourceAssemblies());
        var layers = LayerTable.Read(Path.Combine(RepositoryRoot(), "docs", "architecture.md"));
        var problems = new List<string>();
        // The baselines (src/Baselines) are programs of their own beside the proxy, not layers of it.
        foreach (var ns in graph.Namespaces.Where(n => n == "LLRP" || (n.StartsWith("LLRP.", StringComparison.Ordinal) && !n.StartsWith("LLRP.Baselines", StringComparison.Ordinal))))
        {
            if (!layers.Rows.TryGetValue(ns, out var row))
            {
                problems.Add($"{ns} has no row in docs/architecture.md's table");
                continue;
            }
            var used = graph.EdgesFrom(ns).Where(n => n != "(global)").ToList();
            foreach (var to in used.Where(to => !row.DependsOn.Any(d => LayerTable.Covers(d, to))))
            {
                problems.Add($"{ns} uses {to}, which its row does not name ({graph.Example(ns, to)})");
            }
            foreach (var named in row.DependsOn.Where(d => !used.Any(to => LayerTable.Covers(d, to))))
            {
                problems.Add($"{ns}'s row names {named}, which it does not use");
            }
            foreach (var named in row.DependsOn.Where(d => layers.Rows.TryGetValue(d, out var below) && below.Position <= row.Position))
            {
                problems.Add($"{ns}'s row names {named}, which is not below it in the table");
            }
        }
        foreach (var ns in graph.Namespaces.Where(n => n.StartsWith("LLHttp", StringComparison.Ordinal)))
        {
            foreach (var to in graph.EdgesFrom(ns).Where(to => to.StartsWith("LLRP", StringComparison.Ordinal)))
            {
                problems.Add($"{ns}, a library under LLRP, uses {to} ({graph.Example(ns, to)})");
            }
        }
        Assert.True(problems.Count == 0, string.Join("\n", problems));
    }

    /// <summary>
    /// A variant sees the exchange, never its lifecycle: no type of LLRP.Forwarding or LLRP.Context names
    /// <see cref="IExchangeControl"/> (which <see cref="Exchange"/> implements explicitly, so naming it is the only way to
    /// start, expire, abort, rebind or dispose an exchange) or calls a member of <see cref="Exchange"/> that has a
    /// lifecycle member's name (should one become public again). The front ends do name it: were the name this looks
    /// for stale, that would fail rather than let the check pass on nothing.
    /// </summary>
    [Fact]
    public void NoVariantReachesTheExchangesLifecycle()
    {
        var architecture = SourceArchitecture.Load(SourceAssemblies());
        var control = typeof(IExchangeControl).FullName!;
        var exchange = typeof(Exchange).FullName!;
        var lifecycle = typeof(IExchangeControl).GetMethods().Select(m => m.Name).ToHashSet(StringComparer.Ordinal);
        string[] variants = ["LLRP.Forwarding", "LLRP.Context"];
        string[] frontEnds = ["LLRP.Connections", "LLRP.Http2", "LLRP.KestrelHttp"];

        var problems = new List<string>();
        var frontEndUses = 0;
        foreach (var type in architecture.Types)
        {
            var ns = type.Namespace?.FullName ?? "";
            var variant = variants.Contains(ns);
            foreach (var dependency in type.Dependencies)
            {
                var reachesControl = dependency.Target.FullName == control;
                var callsLifecycle = dependency is IMemberMemberDependency { TargetMember: var member }
                    && member.DeclaringType.FullName == exchange && lifecycle.Contains(SimpleName(member.Name));
                if (variant && (reachesControl || callsLifecycle))
                {
                    problems.Add(dependency is IMemberMemberDependency called
                        ? $"{type.FullName} uses {called.TargetMember.DeclaringType.Name}.{called.TargetMember.Name}"
                        : $"{type.FullName} uses {dependency.Target.Name}");
                }
                frontEndUses += reachesControl && frontEnds.Contains(ns) ? 1 : 0;
            }
        }
        Assert.True(frontEndUses > 0, $"no front end ({string.Join(", ", frontEnds)}) uses {control}: the check looks for a name the code no longer has");
        Assert.True(problems.Count == 0, $"a variant reaches the exchange's lifecycle:\n{string.Join("\n", problems.Distinct())}");

        // "Start()", or "LLRP.Exchanges.IExchangeControl.Start()" for an explicit implementation: "Start".
        static string SimpleName(string name)
        {
            var end = name.IndexOf('(');
            var bare = end < 0 ? name : name[..end];
            return bare[(bare.LastIndexOf('.') + 1)..];
        }
    }

    private const string KestrelInternal = "Microsoft.AspNetCore.Server.Kestrel.Core.Internal";

    /// <summary>
    /// Kestrel's internal types (public, but outside its supported API: they change between releases) are named only
    /// where the proxy meets Kestrel: LLRP.KestrelHttp, LLRP.Hosting (which configures Kestrel) and the HTTP/1.1 parser
    /// adapter (KestrelParser, ParserHandler), which turns the callbacks of Kestrel's parser into the proxy's own types.
    /// </summary>
    [Fact]
    public void KestrelsInternalTypesAreNamedOnlyWhereTheProxyMeetsKestrel()
    {
        var references = TypeReference.Read(SourceAssemblies());
        // The rule could hold for want of seeing any reference outside src/: the parser adapter makes some.
        Assert.Contains(references, r => IsKestrelInternal(r.ToNamespace) && IsTypeOrNested(r.From, "LLRP.Http1.ParserHandler"));
        var problems = references.Where(r => IsKestrelInternal(r.ToNamespace) && !MayNameKestrelInternals(r))
            .Select(r => r.ToString()).Distinct().ToList();
        Assert.True(problems.Count == 0, $"Kestrel's internal types named outside KestrelHttp, Hosting and the parser adapter:\n{string.Join("\n", problems)}");
    }

    /// <summary>
    /// The HTTP/1.1 request side knows no other protocol: no type of LLRP.Http1 names a type of LLRP.Http2, of
    /// LLRP.KestrelHttp or of LLHttp2's assembly. What differs by protocol reaches it as data (LLRP.Semantics).
    /// </summary>
    [Fact]
    public void Http1NamesNoOtherProtocol()
    {
        var problems = TypeReference.Read(SourceAssemblies())
            .Where(r => IsWithin(r.FromNamespace, "LLRP.Http1") &&
                (IsWithin(r.ToNamespace, "LLRP.Http2") || IsWithin(r.ToNamespace, "LLRP.KestrelHttp") || IsWithin(r.ToNamespace, "LLHttp2")))
            .Select(r => r.ToString()).Distinct().ToList();
        Assert.True(problems.Count == 0, $"LLRP.Http1 names another protocol's types:\n{string.Join("\n", problems)}");
    }

    private static bool IsKestrelInternal(string ns) => IsWithin(ns, KestrelInternal);

    private static bool MayNameKestrelInternals(TypeReference reference) =>
        reference.FromNamespace is "LLRP.KestrelHttp" or "LLRP.Hosting" ||
        IsTypeOrNested(reference.From, "LLRP.Http1.KestrelParser") || IsTypeOrNested(reference.From, "LLRP.Http1.ParserHandler");

    private static bool IsWithin(string ns, string root) => ns == root || ns.StartsWith(root + ".", StringComparison.Ordinal);

    // A nested type (a lambda's closure, a state machine) is written Outer/Inner or Outer+Inner.
    private static bool IsTypeOrNested(string type, string name) =>
        type == name || (type.StartsWith(name, StringComparison.Ordinal) && type.Length > name.Length && type[name.Length] is '/' or '+');

    [Fact]
    public void ACycleIsFoundAndPrinted()
    {
        var graph = new NamespaceGraph();
        graph.Add("A", "B", "A.X uses B.Y");
        graph.Add("B", "C", "B.Y uses C.Z");
        graph.Add("C", "A", "C.Z uses A.X");
        graph.Add("C", "D", "C.Z uses D.W");
        graph.Add("E", "D", "E.V uses D.W");

        var cycle = Assert.Single(graph.Cycles());
        Assert.Equal(["A", "B", "C"], cycle);
        Assert.Equal("A -> B (A.X uses B.Y) -> C (B.Y uses C.Z) -> A (C.Z uses A.X)", graph.Describe(cycle));
    }

    [Fact]
    public void AnAcyclicGraphHasNoCycle()
    {
        var graph = new NamespaceGraph();
        graph.Add("A", "B", "");
        graph.Add("B", "C", "");
        graph.Add("A", "C", "");
        Assert.Empty(graph.Cycles());
    }

    /// <summary>The built assembly of every project under src/, in the configuration the tests were built in.</summary>
    private static IReadOnlyList<string> SourceAssemblies()
    {
        var configuration = typeof(ArchitectureTests).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Release";
        var src = Path.Combine(RepositoryRoot(), "src");
        var assemblies = new List<string>();
        foreach (var project in Directory.EnumerateFiles(src, "*.csproj", SearchOption.AllDirectories))
        {
            var name = XDocument.Load(project).Descendants("AssemblyName").FirstOrDefault()?.Value ?? Path.GetFileNameWithoutExtension(project);
            var assembly = Path.Combine(Path.GetDirectoryName(project)!, "bin", configuration, "net10.0", name + ".dll");
            Assert.True(File.Exists(assembly), $"{assembly} is not built: the test project must build every project under src/");
            assemblies.Add(assembly);
        }
        return assemblies;
    }

    internal static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "LLRP.slnx")))
            {
                return dir.FullName;
            }
        }
        throw new DirectoryNotFoundException($"LLRP.slnx was not found above {AppContext.BaseDirectory}");
    }
}

/// <summary>The types of the given assemblies and what each references, as ArchUnitNET reads them.</summary>
internal static class SourceArchitecture
{
    public static ArchUnitNET.Domain.Architecture Load(IEnumerable<string> assemblies)
    {
        var loader = new ArchLoader();
        foreach (var path in assemblies)
        {
            loader = loader.LoadFilteredDirectory(Path.GetDirectoryName(path)!, Path.GetFileName(path), SearchOption.TopDirectoryOnly);
        }
        return loader.Build();
    }
}

/// <summary>Namespaces and which depends on which, with one type-level example per edge to print.</summary>
internal sealed class NamespaceGraph
{
    private readonly SortedDictionary<string, SortedDictionary<string, string>> _edges = new(StringComparer.Ordinal);

    public IEnumerable<string> Namespaces => _edges.Keys;

    public IEnumerable<string> EdgesFrom(string from) => _edges.TryGetValue(from, out var to) ? to.Keys : [];

    /// <summary>The type-level reference that made the edge.</summary>
    public string Example(string from, string to) => _edges[from][to];

    /// <summary>The namespaces of the given assemblies and their dependencies among themselves (not on anything else).</summary>
    public static NamespaceGraph Read(IEnumerable<string> assemblies)
    {
        var architecture = SourceArchitecture.Load(assemblies);
        var graph = new NamespaceGraph();
        var ours = architecture.Types.Select(NamespaceOf).ToHashSet(StringComparer.Ordinal);
        foreach (var type in architecture.Types)
        {
            var from = NamespaceOf(type);
            graph.Node(from);
            foreach (var dependency in type.Dependencies)
            {
                var to = NamespaceOf(dependency.Target);
                if (to != from && ours.Contains(to) && architecture.Types.Contains(dependency.Target))
                {
                    graph.Add(from, to, $"{type.Name} uses {dependency.Target.Name}");
                }
            }
        }
        return graph;
    }

    // A top-level Program is in the global namespace, which ArchUnitNET gives no Namespace.
    public static string NamespaceOf(ArchUnitNET.Domain.IType type) => type.Namespace?.FullName is { Length: > 0 } name ? name : "(global)";

    private SortedDictionary<string, string> Node(string name)
    {
        if (!_edges.TryGetValue(name, out var to))
        {
            _edges[name] = to = new SortedDictionary<string, string>(StringComparer.Ordinal);
        }
        return to;
    }

    /// <summary>An edge; the first example given for it is the one printed.</summary>
    public void Add(string from, string to, string example)
    {
        Node(to);
        Node(from).TryAdd(to, example);
    }

    /// <summary>
    /// One cycle per strongly connected component of more than one namespace (Tarjan), as the namespaces along it,
    /// starting at the component's first name in ordinal order.
    /// </summary>
    public List<List<string>> Cycles()
    {
        var index = new Dictionary<string, int>();
        var low = new Dictionary<string, int>();
        var stack = new Stack<string>();
        var onStack = new HashSet<string>();
        var components = new List<List<string>>();
        foreach (var node in _edges.Keys)
        {
            if (!index.ContainsKey(node))
            {
                Connect(node);
            }
        }
        return [.. components.Where(c => c.Count > 1).Select(c => PathWithin(c.Order(StringComparer.Ordinal).ToHashSet()))];

        void Connect(string node)
        {
            index[node] = low[node] = index.Count;
            stack.Push(node);
            onStack.Add(node);
            foreach (var next in _edges[node].Keys)
            {
                if (!index.ContainsKey(next))
                {
                    Connect(next);
                    low[node] = Math.Min(low[node], low[next]);
                }
                else if (onStack.Contains(next))
                {
                    low[node] = Math.Min(low[node], index[next]);
                }
            }
            if (low[node] == index[node])
            {
                var component = new List<string>();
                string member;
                do
                {
                    member = stack.Pop();
                    onStack.Remove(member);
                    component.Add(member);
                }
                while (member != node);
                components.Add(component);
            }
        }
    }

    /// <summary>A shortest cycle through the component's first namespace (breadth-first within the component).</summary>
    private List<string> PathWithin(HashSet<string> component)
    {
        var start = component.First();
        var previous = new Dictionary<string, string>();
        var queue = new Queue<string>([start]);
        while (queue.Count > 0)
        {
            var node = queue.Dequeue();
            foreach (var next in _edges[node].Keys.Where(component.Contains))
            {
                if (next == start)
                {
                    var path = new List<string> { node };
                    while (path[0] != start)
                    {
                        path.Insert(0, previous[path[0]]);
                    }
                    return path;
                }
                if (previous.TryAdd(next, node))
                {
                    queue.Enqueue(next);
                }
            }
        }
        throw new InvalidOperationException($"no cycle through {start}");
    }

    /// <summary>"A -> B (why) -> C (why) -> A (why)".</summary>
    public string Describe(List<string> cycle)
    {
        var text = new System.Text.StringBuilder(cycle[0]);
        for (var i = 0; i < cycle.Count; i++)
        {
            var from = cycle[i];
            var to = cycle[(i + 1) % cycle.Count];
            text.Append($" -> {to} ({_edges[from][to]})");
        }
        return text.ToString();
    }
}

/// <summary>
/// One type of the given assemblies naming another type, of any assembly (the framework's too), as
/// <see cref="NamespaceGraph"/> reads it: signatures, fields, attributes and method bodies, a compiler-generated type's
/// counted for the type that declares it.
/// </summary>
internal sealed record TypeReference(string From, string FromNamespace, string To, string ToNamespace)
{
    public static List<TypeReference> Read(IEnumerable<string> assemblies) =>
    [
        .. SourceArchitecture.Load(assemblies).Types.SelectMany(type => type.Dependencies.Select(dependency => new TypeReference(
            type.FullName, NamespaceGraph.NamespaceOf(type), dependency.Target.FullName, NamespaceGraph.NamespaceOf(dependency.Target)))),
    ];

    public override string ToString() => $"{From} uses {To}";
}

/// <summary>
/// The "Folders and namespaces" table of docs/architecture.md: each row's namespace (root is LLRP), its place from the
/// top, and the names of its "depends on" cell as namespaces (LLHttp stands for the client's assembly, LLHttp and its
/// sub-namespaces other than LLHttp.Syntax and LLHttp.Sockets, which are named on their own).
/// </summary>
internal sealed partial class LayerTable
{
    public sealed record Row(int Position, IReadOnlyList<string> DependsOn);

    public Dictionary<string, Row> Rows { get; } = new(StringComparer.Ordinal);

    public static LayerTable Read(string path)
    {
        var table = new LayerTable();
        var lines = File.ReadAllLines(path).SkipWhile(l => !l.StartsWith("## Folders and namespaces", StringComparison.Ordinal)).Skip(1)
            .SkipWhile(l => !l.StartsWith('|')).TakeWhile(l => l.StartsWith('|')).Skip(2);
        foreach (var line in lines)
        {
            var cells = line.Trim('|').Split(" | ");
            var name = cells[0].StartsWith("root", StringComparison.Ordinal) ? "LLRP" : NamespaceCell().Match(cells[0]).Groups[1].Value;
            var dependsOn = cells[^1].Trim() == "nothing" ? [] : cells[^1].Split(',', StringSplitOptions.TrimEntries)
                .Select(d => d switch { "root" => "LLRP", _ when d.StartsWith("LLHttp", StringComparison.Ordinal) => d, _ => "LLRP." + d })
                .ToList();
            table.Rows[name] = new Row(table.Rows.Count, dependsOn);
        }
        Assert.True(table.Rows.Count > 0, $"no table under '## Folders and namespaces' in {path}");
        return table;
    }

    /// <summary>Whether a name of a "depends on" cell stands for the namespace <paramref name="ns"/>.</summary>
    public static bool Covers(string named, string ns) =>
        named == ns || (named == "LLHttp" && ns.StartsWith("LLHttp.", StringComparison.Ordinal) && ns is not ("LLHttp.Syntax" or "LLHttp.Sockets"));

    [System.Text.RegularExpressions.GeneratedRegex(@"\(`([A-Za-z0-9.]+)`\)")]
    private static partial System.Text.RegularExpressions.Regex NamespaceCell();
}
