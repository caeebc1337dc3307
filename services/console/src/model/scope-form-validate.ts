import {
  fromDatetimeInput,
  type FieldValue,
  type FormValues,
  type ScopeField,
  type ScopeForm,
} from './scope-form';

/** A JSON Schema pattern (ECMA 262, unicode first); one the browser cannot compile is left to the server. */
function compile(pattern: string): RegExp | undefined {
  for (const flags of ['u', '']) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // try the next flags
    }
  }
  return undefined;
}

function textProblem(field: ScopeField, text: string): string | undefined {
  if (field.minLength !== undefined && text.length < field.minLength) {
    return `At least ${field.minLength} characters`;
  }
  if (field.maxLength !== undefined && text.length > field.maxLength) {
    return `At most ${field.maxLength} characters`;
  }
  if (field.pattern !== undefined) {
    const pattern = compile(field.pattern);
    if (pattern !== undefined && !pattern.test(text)) {
      return `Not a valid ${field.label.toLowerCase()}`;
    }
  }
  return undefined;
}

function numberProblem(field: ScopeField, text: string): string | undefined {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) return 'Must be a number';
  if (field.integer === true && !Number.isInteger(value)) return 'Must be a whole number';
  if (field.minimum !== undefined && value < field.minimum) return `At least ${field.minimum}`;
  if (field.maximum !== undefined && value > field.maximum) return `At most ${field.maximum}`;
  return undefined;
}

function itemsProblem(field: ScopeField, items: string[]): string | undefined {
  if (field.minItems !== undefined && items.length < field.minItems) {
    return field.minItems === 1 ? 'Choose at least one' : `Choose at least ${field.minItems}`;
  }
  if (field.maxItems !== undefined && items.length > field.maxItems) {
    return `Choose at most ${field.maxItems}`;
  }
  const unknown = items.filter((i) => field.options !== undefined && !field.options.includes(i));
  if (unknown.length > 0) return `Unknown choice ${unknown.join(', ')}`;
  const pattern = field.itemPattern === undefined ? undefined : compile(field.itemPattern);
  const bad = items.filter((i) => pattern !== undefined && !pattern.test(i));
  if (bad.length > 0) return `Not valid: ${bad.join(', ')}`;
  if (new Set(items).size < items.length) return 'Each value once';
  return undefined;
}

function jsonProblem(text: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? undefined
      : 'Must be a JSON object';
  } catch {
    return 'Not valid JSON';
  }
}

function asText(value: FieldValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function asList(value: FieldValue | undefined): string[] {
  if (Array.isArray(value)) return value;
  return asText(value)
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function emptyValue(field: ScopeField, value: FieldValue | undefined): boolean {
  if (field.kind === 'boolean') return false;
  if (field.kind === 'checkboxes' || field.kind === 'list') return asList(value).length === 0;
  return asText(value).trim() === '';
}

function fieldProblem(field: ScopeField, value: FieldValue | undefined): string | undefined {
  if (emptyValue(field, value)) return field.required ? 'Required' : undefined;
  const text = asText(value);
  switch (field.kind) {
    case 'select':
      return field.options?.includes(text) === false
        ? `Choose one of ${field.options.join(', ')}`
        : undefined;
    case 'checkboxes':
    case 'list':
      return itemsProblem(field, asList(value));
    case 'datetime':
      return fromDatetimeInput(text) === undefined ? 'Not a valid date and time' : undefined;
    case 'number':
      return numberProblem(field, text);
    case 'json':
      return jsonProblem(text);
    case 'boolean':
      return undefined;
    case 'text':
      return textProblem(field, text);
  }
}

/** Problems by field name; empty when the form can be submitted. */
export function validateScope(form: ScopeForm, values: FormValues): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of form.fields) {
    const problem = fieldProblem(field, values[field.name]);
    if (problem !== undefined) problems[field.name] = problem;
  }
  return problems;
}

function valueOf(field: ScopeField, value: FieldValue | undefined): unknown {
  const text = asText(value).trim();
  switch (field.kind) {
    case 'checkboxes': {
      const chosen = asList(value);
      // in the schema's order, whatever order they were ticked in
      return (field.options ?? chosen).filter((o) => chosen.includes(o));
    }
    case 'list':
      return asList(value);
    case 'datetime':
      return fromDatetimeInput(text);
    case 'number':
      return Number(text);
    case 'json':
      return JSON.parse(text) as unknown;
    case 'boolean':
      return value === true;
    default:
      return text;
  }
}

/** The scope a valid form submits: empty optional fields (and unticked optional booleans) left out. */
export function toScope(form: ScopeForm, values: FormValues): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  for (const field of form.fields) {
    const value = values[field.name];
    if (field.kind === 'boolean' ? value !== true && !field.required : emptyValue(field, value)) {
      continue;
    }
    scope[field.name] = valueOf(field, value);
  }
  return scope;
}
