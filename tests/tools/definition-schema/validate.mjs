// Validates workflow definitions against docs/definition.schema.json and, when given, against the WorkflowDefinition
// schema of a served OpenAPI document, with Ajv (JSON Schema 2020-12, the dialect of both).
// Usage: node validate.mjs <definition.schema.json> <openapi.json | -> <definition.json>...
// Prints one JSON line per definition: { file, schema: { valid, errors }, document: { valid, errors } | null }.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [schemaPath, documentPath, ...files] = process.argv.slice(2);
if (!schemaPath || !documentPath || files.length === 0) {
  console.error("usage: node validate.mjs <definition.schema.json> <openapi.json | -> <definition.json>...");
  process.exit(2);
}

const read = (path) => JSON.parse(readFileSync(path, "utf8"));
// Strict about the schema itself (an unknown or misspelt keyword is an error), not about the style rules Ajv adds on top
// of JSON Schema (a "type" beside every "required").
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
addFormats(ajv);
const fromFile = ajv.compile(read(schemaPath));

let fromDocument = null;
if (documentPath !== "-") {
  // The OpenAPI document is not itself a schema: its keywords outside the schemas are not checked (strict off), and the
  // formats OpenAPI adds for numbers are only annotations.
  const documentAjv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(documentAjv);
  for (const format of ["int32", "int64", "float", "double"]) {
    documentAjv.addFormat(format, true);
  }
  documentAjv.addSchema(read(documentPath), "openapi.json");
  fromDocument = documentAjv.getSchema("openapi.json#/components/schemas/WorkflowDefinition");
  if (!fromDocument) {
    console.error("the OpenAPI document has no #/components/schemas/WorkflowDefinition");
    process.exit(2);
  }
}

const outcome = (validate, definition) =>
  validate(definition)
    ? { valid: true, errors: [] }
    : { valid: false, errors: validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`) };

for (const file of files) {
  const definition = read(file);
  console.log(JSON.stringify({
    file,
    schema: outcome(fromFile, definition),
    document: fromDocument ? outcome(fromDocument, definition) : null,
  }));
}
