// Compile-time checks of the step types generated from the OpenAPI document (Client/TypeScriptClientTests.cs compiles this
// file with tsc --strict). A step is one of the step types, told apart by "type": each has its own fields, its required
// fields are required, and a field no type of that name has does not compile. Every line after @ts-expect-error must be
// an error; tsc reports the directive itself when it is not.
import type { components } from "workflow-service-openapi";

type WorkflowDefinition = components["schemas"]["WorkflowDefinition"];
type Step = components["schemas"]["WorkflowDefinitionStep"];

export const typed: WorkflowDefinition = {
  name: "typed",
  steps: [
    { id: "check", type: "decision", branches: [{ when: "vars.ok", next: "done" }], otherwise: "stop" },
    { id: "stop", type: "fail", reason: "'not ok'" },
    { id: "done", type: "complete", result: "vars.ok" },
  ],
};

// "type" tells the step types apart: a fail step has a reason.
export function reasonOf(step: Step): string | undefined {
  return step.type === "fail" ? step.reason : undefined;
}

export const wrong: WorkflowDefinition = {
  name: "wrong",
  steps: [
    // @ts-expect-error a fail step takes reason, not error (issue #37)
    { id: "stop", type: "fail", error: "'not ok'" },
    // @ts-expect-error a delay step has no signal
    { id: "pause", type: "delay", duration: "PT1S", signal: "go" },
    // @ts-expect-error a waitForSignal step needs its signal
    { id: "wait", type: "waitForSignal" },
    // @ts-expect-error no step type is called sleep
    { id: "sleep", type: "sleep" },
    {
      id: "both",
      type: "parallel",
      branches: [{
        name: "a",
        // @ts-expect-error a parallel branch ends by running off its steps: it has no complete step
        steps: [{ id: "end", type: "complete" }],
      }],
    },
  ],
};
