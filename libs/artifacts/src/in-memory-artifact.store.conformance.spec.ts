import { InMemoryArtifactStore } from './in-memory-artifact.store';
import { describeArtifactStoreConformance } from './testing';

describeArtifactStoreConformance('InMemoryArtifactStore', async () => ({
  store: new InMemoryArtifactStore(),
  bucket: 'tda-test-artifacts',
}));
