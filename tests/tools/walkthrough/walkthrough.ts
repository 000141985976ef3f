// The README's "A first workflow with curl", step by step, through a client generated from the service's OpenAPI
// document (openapi-typescript + openapi-fetch): publish docs/examples/signal-roundtrip.json, start an instance under a
// business key, signal it and wait until it completes by definition and key, read its history. Then what the README
// links to: signal-with-start on a new key, and a schedule triggered now whose instance is read by its key. Any answer
// other than the one documented ends the script with exit code 1.
//
// WORKFLOW_URL is the service (default http://localhost:5080); WORKFLOW_API_KEY, when set, is sent as X-Api-Key.
// The last line printed is {"instanceId": "..."} for whoever runs the script to check the instance.
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import type { components, paths } from "workflow-service-openapi";

type StartInstanceRequest = components["schemas"]["StartInstanceRequest"];
type SendSignalRequest = components["schemas"]["SendSignalRequest"];
type SignalWithStartRequest = components["schemas"]["SignalWithStartRequest"];
type ScheduleRequest = components["schemas"]["ScheduleRequest"];
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

  // 2. Start an instance under a key of your own (an order number); it runs to its first wait point
  const name = "signal-roundtrip";
  const businessKey = "order-1042";
  const start: StartInstanceRequest = { definition: name, businessKey, input: { customer: 42 } };
  const started = await client.POST("/instances", { body: start });
  expect(started.response.status === 201 && started.data !== undefined, "starting should answer 201", started.error);
  const id = started.data.id;
  expect(started.data.businessKey === businessKey && started.data.status === "Waiting" && started.data.wait?.kind === "Signal"
    && started.data.wait.signal === "go", "the new instance should have the key and wait for the signal go", started.data);
  console.log(`started ${id} as ${name}/${businessKey}, waiting for ${started.data.wait.signal}`);

  // 3. Signal it by definition and key: no instance id to keep
  const byKey = { path: { name, businessKey } };
  const signal: SendSignalRequest = { name: "go", payload: { value: 7 } };
  const sent = await client.POST("/definitions/{name}/instances/{businessKey}/signals", { params: byKey, body: signal });
  expect(sent.response.status === 202 && sent.data?.name === "go" && sent.data.instanceId === id,
    "the signal by key should be accepted (202) for the instance started", sent.error ?? sent.data);

  // 4. Wait (long-poll, at most 10 s) until it completes, and read it
  const waited = await client.GET("/definitions/{name}/instances/{businessKey}", {
    params: { ...byKey, query: { waitFor: ["Completed"], timeout: 10 } },
  });
  expect(waited.response.status === 200 && waited.data !== undefined, "reading the instance by key should answer 200", waited.error);
  const output = waited.data.output as { result?: { value?: unknown } } | null;
  expect(waited.data.id === id && waited.data.status === "Completed" && output?.result?.value === 7,
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

  await signalWithStart(name);
  await scheduleTriggeredNow(name);
  return id;
}

// Signal-with-start on a key no instance has: one request starts the instance and delivers the signal.
async function signalWithStart(name: string): Promise<void> {
  const businessKey = `order-${crypto.randomUUID()}`;
  const body: SignalWithStartRequest = { signal: "go", payload: { value: 8 }, input: { customer: 43 } };
  const answered = await client.POST("/definitions/{name}/instances/{businessKey}/signal-with-start", {
    params: { path: { name, businessKey } }, body,
  });
  expect(answered.response.status === 202 && answered.data?.started === true && answered.data.signal.name === "go",
    "signal-with-start on a new key should start the instance and accept the signal (202)", answered.error ?? answered.data);
  const ended = await client.GET("/definitions/{name}/instances/{businessKey}", {
    params: { path: { name, businessKey }, query: { waitFor: ["Completed"], timeout: 10 } },
  });
  expect(ended.data?.id === answered.data.instanceId && ended.data.status === "Completed",
    "the instance signal-with-start made should complete", ended.error ?? ended.data);
  console.log(`signal-with-start made ${answered.data.instanceId} as ${name}/${businessKey}: ${ended.data.status}`);
}

// A schedule (hourly), triggered now: its occurrence's instance is read by the key the schedule's template gave it.
async function scheduleTriggeredNow(name: string): Promise<void> {
  const schedule: ScheduleRequest = {
    name: `hourly-${crypto.randomUUID()}`, definition: name, input: { customer: 44 }, intervalSeconds: 3600,
    businessKey: "hourly-{fireTime}", overlapPolicy: "Skip",
  };
  const created = await client.POST("/schedules", { body: schedule });
  expect(created.response.status === 201 && created.data !== undefined && created.data.nextFireTimes.length > 0,
    "creating a schedule should answer 201 with its next fire times", created.error);
  const scheduleId = { path: { id: created.data.id } };
  const triggered = await client.POST("/schedules/{id}/trigger", { params: scheduleId });
  const action = triggered.data?.actions[0];
  expect(triggered.response.status === 200 && action?.outcome === "started" && typeof action.detail === "string",
    "triggering should start an occurrence under its business key", triggered.error ?? triggered.data);
  const occurrence = await client.GET("/definitions/{name}/instances/{businessKey}", {
    params: { path: { name, businessKey: action.detail } },
  });
  expect(occurrence.data?.id === action.instanceId && occurrence.data.status === "Waiting",
    "the occurrence's instance should be found by its key, waiting", occurrence.error ?? occurrence.data);
  const deleted = await client.DELETE("/schedules/{id}", { params: scheduleId });
  expect(deleted.response.status === 204, "deleting the schedule should answer 204", deleted.error);
  console.log(`schedule ${created.data.name} started ${action.instanceId} as ${name}/${action.detail}`);
}

try {
  const id = await walkthrough();
  console.log(JSON.stringify({ instanceId: id }));
} catch (error) {
  console.error(error instanceof UnexpectedAnswer ? error.message : error);
  process.exitCode = 1;
}
