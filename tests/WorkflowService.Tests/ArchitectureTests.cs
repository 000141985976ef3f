using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using WorkflowService.CallOuts;
using WorkflowService.Engine.Execution;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Providers.WakeUp;

namespace WorkflowService.Tests;

public sealed class ArchitectureTests
{
    [Fact]
    public void The_engine_knows_nothing_of_http_or_database_drivers()
    {
        var forbidden = new[]
        {
            "Microsoft.AspNetCore", "Microsoft.Extensions.Http", "System.Net.Http", "WorkflowService.CallOuts",
            "Microsoft.EntityFrameworkCore", "Npgsql", "MongoDB", "Oracle", "StackExchange.Redis", "Microsoft.Data.Sqlite",
        };
        var references = typeof(WorkflowExecutor).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.NotEmpty(references);
        Assert.DoesNotContain(references, name => forbidden.Any(f => name.StartsWith(f, StringComparison.Ordinal)));
    }

    [Fact]
    public void The_engine_needs_no_resilience_library()
    {
        // Reconnecting with backoff is the providers' (WorkflowService.Providers): the engine runs no listener of its own.
        var references = typeof(WorkflowExecutor).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.DoesNotContain(references, name => name.StartsWith("Polly", StringComparison.Ordinal));
        Assert.DoesNotContain("WorkflowService.Providers", references);
    }

    [Fact]
    public void The_providers_library_builds_on_the_engine_and_polly_alone()
    {
        // What the store and wake-up projects share: no HTTP, no driver, no other project of this service.
        var allowed = new[] { "System.", "Microsoft.Extensions.", "Polly.Core", "WorkflowService.Engine" };
        var references = typeof(BroadcastWakeUp).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.Contains("WorkflowService.Engine", references);
        Assert.All(references, name => Assert.True(name == "netstandard" || allowed.Any(a => name.StartsWith(a, StringComparison.Ordinal)),
            $"WorkflowService.Providers references {name}"));
    }

    [Fact]
    public void The_host_picks_a_store_by_configuration_and_knows_no_database_driver()
    {
        var forbidden = new[] { "Microsoft.EntityFrameworkCore", "Npgsql", "MongoDB", "Oracle", "StackExchange.Redis", "Microsoft.Data.Sqlite" };
        var references = typeof(Program).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.Contains("WorkflowService.Storage.Relational", references);
        Assert.Contains("WorkflowService.CallOuts", references);
        Assert.Contains("WorkflowService.Storage.MongoDb", references);
        Assert.DoesNotContain(references, name => forbidden.Any(f => name.StartsWith(f, StringComparison.Ordinal)));
    }

    [Fact]
    public void The_call_outs_library_depends_on_the_engine_and_the_http_client_only()
    {
        // Its senders (the http steps; webhooks next) reuse it without a web host or a store.
        var allowed = new[] { "System.", "Microsoft.Extensions.", "Polly.", "WorkflowService.Engine" };
        var references = typeof(HttpCallOutClient).Assembly.GetReferencedAssemblies().Select(a => a.Name!).ToList();

        Assert.Contains("WorkflowService.Engine", references);
        Assert.Contains("Microsoft.Extensions.Http", references);
        Assert.All(references, name => Assert.True(allowed.Any(a => name.StartsWith(a, StringComparison.Ordinal)), $"{name} is not a dependency the call-outs may have"));
    }

    [Fact]
    public void The_host_reads_a_tenants_objects_only_through_reads_that_take_the_tenant()
    {
        var engineOnly = typeof(IInstanceStore).Assembly.GetTypes()
            .Where(t => t.IsInterface)
            .SelectMany(t => t.GetMethods().Where(m => m.IsDefined(typeof(EngineOnlyAttribute))).Select(m => (Type: t.Name, Method: m.Name)))
            .ToHashSet();
        Assert.Contains(("IInstanceStore", nameof(IInstanceStore.GetInstanceForEngineAsync)), engineOnly);
        Assert.Contains(("ISignalQueue", nameof(ISignalQueue.GetSignalForEngineAsync)), engineOnly);

        var called = CalledMembers(typeof(Program).Assembly);
        Assert.NotEmpty(called);
        Assert.Contains(("IInstanceStore", nameof(IInstanceStore.GetInstanceAsync)), called);
        Assert.Empty(called.Intersect(engineOnly));
    }

    /// <summary>The members of other assemblies that <paramref name="assembly"/> calls, by declaring type and name, read from its metadata.</summary>
    private static HashSet<(string Type, string Method)> CalledMembers(Assembly assembly)
    {
        using var file = File.OpenRead(assembly.Location);
        using var pe = new PEReader(file);
        var metadata = pe.GetMetadataReader();
        var called = new HashSet<(string, string)>();
        foreach (var handle in metadata.MemberReferences)
        {
            var member = metadata.GetMemberReference(handle);
            if (member.Parent.Kind == HandleKind.TypeReference)
            {
                var type = metadata.GetTypeReference((TypeReferenceHandle)member.Parent);
                called.Add((metadata.GetString(type.Name), metadata.GetString(member.Name)));
            }
        }

        return called;
    }

    [Fact]
    public void Only_the_wait_point_writer_queues_signals_and_announces_them()
    {
        // The writes that queue a signal, and the wake-up that announces one: called anywhere else in the engine, a write
        // could forget its announcement, or announce before its commit.
        var owned = new[]
        {
            typeof(ISignalQueue).GetMethod(nameof(ISignalQueue.EnqueueSignalAsync))!,
            typeof(ISignalQueue).GetMethod(nameof(ISignalQueue.EnqueueSignalIfOpenAsync))!,
            typeof(ISignalQueue).GetMethod(nameof(ISignalQueue.ReleaseSignalAsync))!,
            typeof(ISignalQueue).GetMethod(nameof(ISignalQueue.DeferSignalAsync))!,
            typeof(ISignalQueue).GetMethod(nameof(ISignalQueue.ReplayDeadLetterAsync))!,
            typeof(ITaskStore).GetMethod(nameof(ITaskStore.CompleteTaskAsync))!,
            typeof(IWakeUpTransport).GetMethod(nameof(IWakeUpTransport.Notify))!,
        };

        var callers = typeof(WorkflowExecutor).Assembly.GetTypes()
            .SelectMany(type => type.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly)
                .Where(method => CalledBy(method).Any(owned.Contains))
                .Select(method => (Type: type, Method: method.Name)))
            .ToList();

        Assert.NotEmpty(callers);
        Assert.All(callers, caller => Assert.True(Within(caller.Type, typeof(WaitPointWriter)), $"{caller.Type.FullName}.{caller.Method} queues or announces a signal"));
    }

    /// <summary>The methods <paramref name="method"/>'s body calls (its IL read opcode by opcode).</summary>
    private static IEnumerable<MethodBase> CalledBy(MethodInfo method)
    {
        var il = method.GetMethodBody()?.GetILAsByteArray() ?? [];
        for (var at = 0; at < il.Length;)
        {
            var code = il[at] == 0xFE ? TwoByteOpCodes[il[at + 1]] : OneByteOpCodes[il[at]];
            at += code.Size;
            if (code.OperandType == OperandType.InlineMethod
                && method.Module.ResolveMethod(BitConverter.ToInt32(il, at), method.DeclaringType?.GetGenericArguments(), method.GetGenericArguments()) is { } called)
            {
                yield return called;
            }

            at += code.OperandType switch
            {
                OperandType.InlineNone => 0,
                OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
                OperandType.InlineVar => 2,
                OperandType.InlineI8 or OperandType.InlineR => 8,
                OperandType.InlineSwitch => 4 + (4 * BitConverter.ToInt32(il, at)),
                _ => 4,
            };
        }
    }

    private static readonly Dictionary<byte, OpCode> OneByteOpCodes = OpCodesWhere(size: 1);
    private static readonly Dictionary<byte, OpCode> TwoByteOpCodes = OpCodesWhere(size: 2);

    private static Dictionary<byte, OpCode> OpCodesWhere(int size) => typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static)
        .Select(field => (OpCode)field.GetValue(null)!)
        .Where(code => code.Size == size)
        .ToDictionary(code => (byte)(code.Value & 0xFF));

    /// <summary>Whether <paramref name="type"/> is <paramref name="owner"/> or nested in it (an async method's state machine).</summary>
    private static bool Within(Type? type, Type owner) => type is not null && (type == owner || Within(type.DeclaringType, owner));
}
