using System.Globalization;
using System.Text.Json.Nodes;

namespace WorkflowService.Testing;

/// <summary>A generated definition and the signals that drive an instance of it (started with <see cref="LargeDefinitionGenerator.Input"/>) to completion.</summary>
internal sealed record GeneratedDefinition(string Name, string Json, int Steps, IReadOnlyList<string> Signals);

/// <summary>
/// A claims process of any number of steps for the large-definition scenario and the layout tests: blocks of an intake
/// assignment, a decision of two branches and an otherwise (one branch to the rejection end), a fast and a standard
/// path, a parallel step of two branches (two checks beside the pricing) and a merge; every fourth block waits for an
/// approval signal (with a timeout to the escalation end) and loops back to its intake when the approval says so.
/// Filler assignments and three ends make up the exact step count.
/// </summary>
internal static class LargeDefinitionGenerator
{
    /// <summary>Steps per block (the parallel step's three included), and two more in the blocks that wait for an approval.</summary>
    private const int BlockSteps = 9;
    private const int ApprovalSteps = 2;
    private const int ApprovalEvery = 4;
    private const int Ends = 3;

    /// <summary>The input every instance starts with: the standard path everywhere.</summary>
    public static readonly object Input = new { fast = false, amount = 1200 };

    /// <summary>The smallest definition this generates: one block and the ends.</summary>
    public const int MinSteps = BlockSteps + Ends;

    public static GeneratedDefinition Generate(string name, int steps)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(steps, MinSteps);
        var blocks = 0;
        var used = 0;
        while (used + BlockSteps + (IsApprovalBlock(blocks + 1) ? ApprovalSteps : 0) <= steps - Ends)
        {
            blocks++;
            used += BlockSteps + (IsApprovalBlock(blocks) ? ApprovalSteps : 0);
        }

        var fillers = steps - Ends - used;
        var list = new JsonArray();
        var signals = new List<string>();
        for (var k = 1; k <= blocks; k++)
        {
            var after = k < blocks ? $"intake-{k + 1}" : fillers > 0 ? "audit-1" : "settled";
            var merged = IsApprovalBlock(k) ? $"approval-{k}" : after;
            list.Add(Step($"intake-{k}", "assign", new JsonObject
            {
                ["set"] = new JsonObject { ["total"] = $"(vars.total || 0) + input.amount * {k}", ["stage"] = $"'intake {k}'" },
            }));
            list.Add(Step($"route-{k}", "decision", new JsonObject
            {
                ["branches"] = new JsonArray
                {
                    new JsonObject { ["when"] = "vars.total < 0", ["next"] = "rejected" },
                    new JsonObject { ["when"] = "input.fast === true", ["next"] = $"fast-{k}" },
                },
                ["otherwise"] = $"standard-{k}",
            }));
            list.Add(Step($"fast-{k}", "assign", new JsonObject { ["set"] = new JsonObject { ["path"] = "'fast'" }, ["next"] = $"gather-{k}" }));
            list.Add(Step($"standard-{k}", "assign", new JsonObject { ["set"] = new JsonObject { ["path"] = "'standard'" }, ["next"] = $"gather-{k}" }));
            list.Add(Step($"gather-{k}", "parallel", new JsonObject
            {
                ["branches"] = new JsonArray
                {
                    new JsonObject
                    {
                        ["name"] = "checks",
                        ["steps"] = new JsonArray
                        {
                            Step($"check-{k}", "assign", new JsonObject { ["set"] = new JsonObject { [$"checked{k}"] = "vars.total > 0" } }),
                            Step($"verify-{k}", "assign", new JsonObject { ["set"] = new JsonObject { [$"verified{k}"] = $"vars.checked{k} === true" } }),
                        },
                    },
                    new JsonObject
                    {
                        ["name"] = "pricing",
                        ["steps"] = new JsonArray
                        {
                            Step($"price-{k}", "assign", new JsonObject { ["set"] = new JsonObject { [$"price{k}"] = "Math.round(vars.total * 0.07)" } }),
                        },
                    },
                },
                ["next"] = $"merge-{k}",
            }));
            list.Add(Step($"merge-{k}", "assign", new JsonObject
            {
                ["set"] = new JsonObject { ["premium"] = $"(vars.premium || 0) + vars.price{k}" },
                ["next"] = merged,
            }));
            if (IsApprovalBlock(k))
            {
                list.Add(Step($"approval-{k}", "waitForSignal", new JsonObject
                {
                    ["signal"] = $"approval-{k}",
                    ["output"] = $"approval{k}",
                    ["timeout"] = "P7D",
                    ["onTimeout"] = "escalated",
                    ["next"] = $"approved-{k}",
                }));
                list.Add(Step($"approved-{k}", "decision", new JsonObject
                {
                    // Rework: an approval that says no sends the claim back to this block's intake.
                    ["branches"] = new JsonArray { new JsonObject { ["when"] = $"vars.approval{k}.ok === false", ["next"] = $"intake-{k}" } },
                    ["otherwise"] = after,
                }));
                signals.Add($"approval-{k}");
            }
        }

        for (var i = 1; i <= fillers; i++)
        {
            list.Add(Step($"audit-{i}", "assign", new JsonObject
            {
                ["set"] = new JsonObject { ["audit"] = i.ToString(CultureInfo.InvariantCulture) },
                ["next"] = i < fillers ? $"audit-{i + 1}" : "settled",
            }));
        }

        list.Add(Step("settled", "complete", new JsonObject { ["result"] = "({ total: vars.total, premium: vars.premium })" }));
        list.Add(Step("rejected", "fail", new JsonObject { ["reason"] = "'negative total'" }));
        list.Add(Step("escalated", "fail", new JsonObject { ["reason"] = "'approval timed out'" }));

        var document = new JsonObject
        {
            ["name"] = name,
            ["description"] = $"Generated claims process of {steps} steps (large-definition benchmark)",
            ["steps"] = list,
        };
        return new GeneratedDefinition(name, document.ToJsonString(), steps, signals);
    }

    private static bool IsApprovalBlock(int k) => k % ApprovalEvery == 0;

    private static JsonObject Step(string id, string type, JsonObject rest)
    {
        var step = new JsonObject { ["id"] = id, ["type"] = type };
        foreach (var (key, value) in rest.ToList())
        {
            rest.Remove(key);
            step[key] = value;
        }

        return step;
    }
}
