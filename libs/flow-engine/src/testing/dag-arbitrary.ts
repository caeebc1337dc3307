import fc from 'fast-check';

export interface RandomDag {
  /** Step names in creation order: a step depends only on steps earlier in this list. */
  names: string[];
  deps: Record<string, string[]>;
}

/**
 * Random DAGs of 1..maxSteps steps. Names are shuffled so that lexicographic order is not a
 * topological order (decisions that sort by stepId must not get lucky).
 */
export function dagArbitrary(maxSteps = 12): fc.Arbitrary<RandomDag> {
  return fc.integer({ min: 1, max: maxSteps }).chain((n) =>
    fc
      .tuple(
        fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), {
          minLength: n,
          maxLength: n,
        }),
        fc.shuffledSubarray(
          Array.from({ length: n }, (_, i) => `step_${String(i).padStart(2, '0')}`),
          { minLength: n, maxLength: n },
        ),
      )
      .map(([matrix, names]) => {
        const deps: Record<string, string[]> = {};
        names.forEach((name, i) => {
          deps[name] = names.filter((_, j) => j < i && matrix[i]?.[j] === true);
        });
        return { names, deps };
      }),
  );
}
