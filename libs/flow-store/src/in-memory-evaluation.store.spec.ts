import { InMemoryEvaluationStore } from './in-memory-evaluation.store';
import { describeEvaluationStoreConformance } from './testing';

describeEvaluationStoreConformance('in-memory', async () => ({
  store: new InMemoryEvaluationStore(),
  cleanup: async () => undefined,
}));
