/*
 * The trigger form, generated from a flow's scope schema (GET /flows → scopeSchema, a JSON Schema
 * object): one field per property, its control chosen from the property's schema, client-side
 * validation with messages, and the scope object the form submits. Pure: the page renders it.
 */

export type FieldKind =
  'select' | 'checkboxes' | 'datetime' | 'number' | 'boolean' | 'list' | 'json' | 'text';
export type FieldValue = string | string[] | boolean;
export type FormValues = Record<string, FieldValue>;

export interface ScopeField {
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  /** select / checkboxes */
  options?: string[];
  pattern?: string;
  /** list: the pattern every item must match */
  itemPattern?: string;
  /** From the schema's examples: "e.g. BTC-USDT". */
  placeholder?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  integer?: boolean;
  minItems?: number;
  maxItems?: number;
  defaultValue?: FieldValue;
}

export interface ScopeForm {
  fields: ScopeField[];
}

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** The schema's type, ignoring "null" in a type list. */
function typeOf(schema: Schema): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  return strings(type)?.find((t) => t !== 'null');
}

/** "asOf" → "As of", "accountId" → "Account id". */
export function humanize(name: string): string {
  const words = name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function kindOf(schema: Schema): FieldKind {
  const type = typeOf(schema);
  if (strings(schema['enum']) !== undefined) return 'select';
  if (type === 'array') {
    const items = isSchema(schema['items']) ? schema['items'] : {};
    return strings(items['enum']) !== undefined ? 'checkboxes' : 'list';
  }
  if (type === 'string' && schema['format'] === 'date-time') return 'datetime';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'object') return 'json';
  return 'text';
}

function fieldOf(name: string, schema: Schema, required: boolean): ScopeField {
  const kind = kindOf(schema);
  const items = isSchema(schema['items']) ? schema['items'] : {};
  const field: ScopeField = {
    name,
    label: typeof schema['title'] === 'string' ? schema['title'] : humanize(name),
    kind,
    required,
  };
  const optional: Partial<ScopeField> = {
    description: typeof schema['description'] === 'string' ? schema['description'] : undefined,
    options: kind === 'checkboxes' ? strings(items['enum']) : strings(schema['enum']),
    pattern: typeof schema['pattern'] === 'string' ? schema['pattern'] : undefined,
    itemPattern: typeof items['pattern'] === 'string' ? items['pattern'] : undefined,
    placeholder: placeholderOf(schema),
    minLength: num(schema['minLength']),
    maxLength: num(schema['maxLength']),
    minimum: num(schema['minimum']),
    maximum: num(schema['maximum']),
    integer: typeOf(schema) === 'integer' ? true : undefined,
    minItems: num(schema['minItems']),
    maxItems: num(schema['maxItems']),
    defaultValue: defaultOf(kind, schema['default']),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(field, { [key]: value });
  }
  return field;
}

function placeholderOf(schema: Schema): string | undefined {
  const examples = Array.isArray(schema['examples']) ? schema['examples'] : [];
  const shown = examples.filter((e) => typeof e === 'string' || typeof e === 'number').slice(0, 2);
  return shown.length === 0 ? undefined : `e.g. ${shown.join(', ')}`;
}

function defaultOf(kind: FieldKind, value: unknown): FieldValue | undefined {
  if (value === undefined) return undefined;
  if (kind === 'checkboxes' || kind === 'list') return strings(value);
  if (kind === 'boolean') return typeof value === 'boolean' ? value : undefined;
  if (kind === 'datetime') return typeof value === 'string' ? toDatetimeInput(value) : undefined;
  if (kind === 'json') return JSON.stringify(value, null, 2);
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** The form of a scope schema; a missing or non-object schema gives no fields. */
export function scopeFormFromSchema(schema: unknown): ScopeForm {
  if (!isSchema(schema) || !isSchema(schema['properties'])) return { fields: [] };
  const required = new Set(strings(schema['required']) ?? []);
  const fields = Object.entries(schema['properties'])
    .filter((entry): entry is [string, Schema] => isSchema(entry[1]))
    // a constant is not a choice
    .filter(([, property]) => !('const' in property) && property['readOnly'] !== true)
    .map(([name, property]) => fieldOf(name, property, required.has(name)));
  return { fields };
}

export function initialValues(form: ScopeForm): FormValues {
  return Object.fromEntries(
    form.fields.map((f) => {
      if (f.defaultValue !== undefined) return [f.name, f.defaultValue];
      if (f.kind === 'checkboxes') return [f.name, [] as string[]];
      if (f.kind === 'boolean') return [f.name, false];
      return [f.name, ''];
    }),
  );
}

/** "2026-09-20T00:00:00Z" → "2026-09-20T00:00" (a datetime-local value; the form is in UTC). */
export function toDatetimeInput(iso: string): string {
  const parsed = Date.parse(iso);
  return Number.isNaN(parsed) ? '' : new Date(parsed).toISOString().slice(0, 16);
}

/** "2026-09-20T00:00" read as UTC → "2026-09-20T00:00:00Z"; undefined when it is not a date. */
export function fromDatetimeInput(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const parsed = Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(parsed) ? undefined : new Date(parsed).toISOString().replace('.000Z', 'Z');
}
