using System.Text.Json.Nodes;

namespace WorkflowService.Tests.Diagrams;

/// <summary>
/// A generated claims process of a given number of steps with every kind of step, decisions of one to three branches,
/// signal waits with timeouts, loops back to earlier steps, shared end steps and some long step ids: the diagram's
/// stress case.
/// </summary>
public static class LargeDefinition
{
    public static string Json(string name, int steps = 40)
    {
        var list = new List<JsonObject>();
        const int ends = 3;
        var blocks = (steps - 1 - ends) / 5;
        var extra = steps - 1 - ends - (blocks * 5);

        list.Add(new JsonObject
        {
            ["id"] = "register-claim",
            ["type"] = "assign",
            ["set"] = new JsonObject { ["score"] = "0", ["round"] = "0" },
        });
        for (var k = 1; k <= blocks; k++)
        {
            var next = k < blocks ? $"check-{k + 1}" : "approved";
            var review = k == 3 ? "review-3-by-the-senior-claims-adjuster-of-the-region" : $"review-{k}";
            var branches = new JsonArray
            {
                new JsonObject { ["when"] = $"vars.score > {k * 10} && input.priority === 'high'", ["next"] = review },
            };
            if (k % 2 == 0)
            {
                branches.Add(new JsonObject { ["when"] = $"vars.round >= {k + 2}", ["next"] = "rejected" });
            }

            if (k % 3 == 0)
            {
                branches.Add(new JsonObject { ["when"] = "input.fastTrack === true", ["next"] = next });
            }

            list.Add(new JsonObject { ["id"] = $"check-{k}", ["type"] = "decision", ["branches"] = branches, ["otherwise"] = $"wait-{k}" });
            list.Add(new JsonObject
            {
                ["id"] = review,
                ["type"] = "humanTask",
                ["title"] = $"Review stage {k}",
                ["role"] = k % 2 == 0 ? "adjuster" : "senior-adjuster",
                ["output"] = $"review{k}",
                ["next"] = $"wait-{k}",
            });
            list.Add(new JsonObject
            {
                ["id"] = $"wait-{k}",
                ["type"] = "waitForSignal",
                ["signal"] = $"documents-{k}",
                ["timeout"] = $"PT{k}H",
                ["onTimeout"] = $"remind-{k}",
                ["output"] = $"documents{k}",
                ["next"] = $"score-{k}",
            });
            list.Add(new JsonObject
            {
                ["id"] = $"remind-{k}",
                ["type"] = "delay",
                ["duration"] = "PT30M",
                ["next"] = k % 2 == 0 ? $"wait-{k}" : $"check-{k}",
            });
            list.Add(new JsonObject
            {
                ["id"] = $"score-{k}",
                ["type"] = "assign",
                ["set"] = new JsonObject { ["score"] = $"vars.score + {k}", ["round"] = "vars.round + 1" },
                ["next"] = next,
            });
        }

        for (var i = 0; i < extra; i++)
        {
            list.Add(new JsonObject { ["id"] = $"audit-{i + 1}", ["type"] = "assign", ["set"] = new JsonObject { ["audited"] = "true" }, ["next"] = "approved" });
        }

        list.Add(new JsonObject { ["id"] = "approved", ["type"] = "complete", ["result"] = "({ approved: true, score: vars.score })" });
        list.Add(new JsonObject { ["id"] = "rejected", ["type"] = "fail", ["reason"] = "'rejected after ' + vars.round + ' rounds'" });
        list.Add(new JsonObject { ["id"] = "withdrawn", ["type"] = "complete", ["result"] = "({ approved: false })" });
        // The withdrawn end is reached from the first wait's timeout chain: make the first reminder able to end there.
        list[4]["next"] = "withdrawn";

        var document = new JsonObject { ["name"] = name, ["steps"] = new JsonArray(list.Cast<JsonNode>().ToArray()) };
        return document.ToJsonString();
    }
}
