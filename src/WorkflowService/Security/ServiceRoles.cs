namespace WorkflowService.Security;

/// <summary>The service's own roles; an operator maps claim roles onto them (<see cref="AuthorizationSettings"/>).</summary>
public static class ServiceRoles
{
    /// <summary>Business applications: start, signal and query instances, read definitions.</summary>
    public const string Application = "application";

    /// <summary>Operators: cancel, terminate, suspend, resume, migrate, replay dead letters, read everything.</summary>
    public const string Operator = "operator";

    /// <summary>Designers: publish definitions, read definitions, manage event subscriptions.</summary>
    public const string Designer = "designer";

    /// <summary>Everything.</summary>
    public const string Admin = "admin";

    public static readonly IReadOnlyList<string> All = [Application, Operator, Designer, Admin];
}

/// <summary>The authorization policies, one per kind of operation.</summary>
public static class Policies
{
    public const string ReadDefinitions = "definitions.read";
    public const string PublishDefinitions = "definitions.publish";
    public const string ReadInstances = "instances.read";
    public const string RunInstances = "instances.run";
    public const string Operate = "operate";

    /// <summary>Changing the database itself: migrating its schema, purging ended instances now.</summary>
    public const string Administer = "administer";

    /// <summary>Creating, changing and deleting event subscriptions, and reading their deliveries.</summary>
    public const string ManageSubscriptions = "subscriptions.manage";

    /// <summary>Creating, changing, pausing, triggering, backfilling and deleting schedules.</summary>
    public const string ManageSchedules = "schedules.manage";

    /// <summary>Any authenticated caller; each task then checks assignee and candidate role.</summary>
    public const string Tasks = "tasks";

    /// <summary>Any authenticated caller; each console page and action then checks the policy of the API endpoint it stands for.</summary>
    public const string Console = "console";

    /// <summary>The service roles that satisfy each policy (admin satisfies all).</summary>
    public static readonly IReadOnlyDictionary<string, string[]> Grants = new Dictionary<string, string[]>
    {
        [ReadDefinitions] = [ServiceRoles.Application, ServiceRoles.Designer, ServiceRoles.Operator, ServiceRoles.Admin],
        [PublishDefinitions] = [ServiceRoles.Designer, ServiceRoles.Admin],
        [ReadInstances] = [ServiceRoles.Application, ServiceRoles.Operator, ServiceRoles.Admin],
        [RunInstances] = [ServiceRoles.Application, ServiceRoles.Admin],
        [Operate] = [ServiceRoles.Operator, ServiceRoles.Admin],
        [Administer] = [ServiceRoles.Admin],
        [ManageSubscriptions] = [ServiceRoles.Designer, ServiceRoles.Admin],
        [ManageSchedules] = [ServiceRoles.Designer, ServiceRoles.Admin],
    };
}
