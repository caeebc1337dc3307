export declare const ROOT: string;
export declare const CONTRACTS_DIR: string;
export declare const OUT_DIR: string;
export declare function loadSchemas(): {
  file: string;
  name: string;
  schema: Record<string, unknown>;
}[];
export declare function generate(): Promise<Record<string, string>>;
export declare function stepInputsSelection(
  schemas: ReturnType<typeof loadSchemas>,
): { stepType: string; name: string; title: string }[];
