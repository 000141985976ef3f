// The README's "A first workflow with curl", step by step, through a client generated from the service's OpenAPI
// document (openapi-typescript + openapi-fetch): publish docs/examples/signal-roundtrip.json, start an instance, signal
// it, wait until it completes, read its history. Any answer other than the README's ends the script with exit code 1.
//
// WORKFLOW_URL is the service (default http://localhost:5080); WORKFLOW_API_KEY, when set, is sent as X-Api-Key.
// The last line printed is {"instanceId": "..."} for whoever runs the script to check the instance.
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import type { components, paths } from "workflow-service-openapi";

type StartInstanceRequest = components["schemas"]["StartInstanceRequest"];
type SendSignalRequest = components["schemas"]["SendSignalRequest"];
type HistoryEventType = components["schemas"]["HistoryEventType"];

class UnexpectedAnswer extends Error {}

function expect(condition: boolean, what: string, answer: unknown): asserts condition {
  if (!condition) {
    throw new UnexpectedAnswer(`${what}; the service answered ${JSON.stringify(answer)}`);
  }
}

const apiKey = process.env["WORKFLOW_API_KEY"];
const client = createClient<paths>({
  baseUrl: process.env["WORKFLOW_URL"] ?? "http://localhost:5080",
  headers: apiKey ? { "X-Api-Key": apiKey } : {},
  // waitFor=Completed,Failed as the README writes it (the document's style: form, explode: false).
  querySerializer: { array: { style: "form", explode: false } },
});

async function walkthrough(): Promise<string> {
  // 1. Publish the definition: start -> wait for signal "go" -> assign -> complete
  const definition: components["schemas"]["WorkflowDefinition"] = JSON.parse(
    readFileSync(new URL("../../../docs/examples/signal-roundtrip.json", import.meta.url), "utf8"),
  );
  const published = await client.POST("/definitions", { body: definition });
  expect(published.response.status === 201 && published.data?.name === "signal-roundtrip",
    "publishing signal-roundtrip should answer 201 with the new version", published.error ?? published.data);
  console.log(`published ${published.data.name} version ${published.data.version}`);

  // 2. Start an instance; it runs to its first wait point and answers with its id
  const start: StartInstanceRequest = { definition: "signal-roundtrip", input: { customer: 42 } };
  const started = await client.POST("/instances", { body: start });
  expect(started.response.status === 201 && started.data !== undefined, "starting should answer 201", started.error);
  const id = started.data.id;
  expect(started.data.status === "Waiting" && started.data.wait?.kind === "Signal" && started.data.wait.signal === "go",
    "the new instance should wait for the signal go", started.data);
  console.log(`started ${id}, waiting for ${started.data.wait.signal}`);

  // 3. Signal it
  const signal: SendSignalRequest = { name: "go", payload: { value: 7 } };
  const sent = await client.POST("/instances/{id}/signals", { params: { path: { id } }, body: signal });
  expect(sent.response.status === 202 && sent.data?.name === "go", "the signal should be accepted (202)", sent.error ?? sent.data);

  // 4. Wait (long-poll, at most 10 s) until it completes, and read it
  const waited = await client.GET("/instances/{id}", {
    params: { path: { id }, query: { waitFor: ["Completed"], timeout: 10 } },
  });
  expect(waited.response.status === 200 && waited.data !== undefined, "reading the instance should answer 200", waited.error);
  const output = waited.data.output as { result?: { value?: unknown } } | null;
  expect(waited.data.status === "Completed" && output?.result?.value === 7,
    "the instance should end Completed with output {\"result\":{\"value\":7}}", waited.data);
  console.log(`instance ${id} is ${waited.data.status} with output ${JSON.stringify(output)}`);

  // 5. Its history
  const history = await client.GET("/instances/{id}/history", { params: { path: { id } } });
  expect(history.response.status === 200 && history.data !== undefined, "reading the history should answer 200", history.error);
  // The first page (up to 50 events) holds the whole of this short history: no next page.
  expect(history.data.next === null || history.data.next === undefined, "a five-event history should fit on its first page", history.data);
  const types: HistoryEventType[] = history.data.items.map((event) => event.type);
  const expected: HistoryEventType[] = ["InstanceStarted", "WaitStarted", "SignalReceived", "StepCompleted", "InstanceCompleted"];
  expect(JSON.stringify(types) === JSON.stringify(expected), `the history should be ${expected.join(", ")}`, types);
  console.log(`history: ${types.join(", ")}`);
  return id;
}

try {
  const id = await walkthrough();
  console.log(JSON.stringify({ instanceId: id }));
} catch (error) {
  console.error(error instanceof UnexpectedAnswer ? error.message : error);
  process.exitCode = 1;
}
