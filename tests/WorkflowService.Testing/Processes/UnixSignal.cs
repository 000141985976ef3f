using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;

namespace WorkflowService.Testing.Processes;

/// <summary>kill(2): the signals the tools send to processes they own (a service node, a database server's processes).</summary>
internal static partial class UnixSignal
{
    public const int Term = 15;
    public const int Kill = 9;
    public const int Stop = 19;
    public const int Cont = 18;

    /// <summary>Sends <paramref name="signal"/> to <paramref name="pid"/>; a process that has gone is no error.</summary>
    public static void Send(int pid, int signal) => _ = KillSystemCall(pid, signal);

    [SuppressMessage("Security", "CA5392:Use DefaultDllImportSearchPaths attribute for P/Invokes", Justification = "libc's kill(2) on Linux, where the attribute's Windows search paths do not apply.")]
    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int KillSystemCall(int pid, int signal);
}
