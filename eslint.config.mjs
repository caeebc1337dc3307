import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/**
 * Architecture boundaries (DESIGN.md §1). Tags live in each project.json:
 * - type:contracts  generated types + validators; imports nothing of ours
 * - type:core       pure domain (flow-engine); contracts only
 * - type:config     env validation (the only reader of process.env); contracts for its error
 * - type:util       cross-cutting helpers (observability)
 * - type:adapter    ports + adapters (flow-store, messaging, ...); never services
 * - type:service    deployable apps (one image each); never other services
 * - type:cli         the `tda` command (services/cli, not deployed); same dependencies as a service
 * - type:test       test helpers; only test files may import them
 * - type:launcher   the local all-in-one launcher (npm start): composes services in one process
 * - type:app        the web console (services/console/): a browser bundle; server libs as types only
 * - type:bench      the benchmarks (bench/, `npm run bench`): libraries, never services
 */
const productionConstraints = [
  { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:contracts', 'type:core'] },
  { sourceTag: 'type:core', onlyDependOnLibsWithTags: ['type:core', 'type:contracts'] },
  { sourceTag: 'type:config', onlyDependOnLibsWithTags: ['type:config', 'type:contracts'] },
  {
    sourceTag: 'type:util',
    onlyDependOnLibsWithTags: ['type:util', 'type:contracts', 'type:config'],
  },
  {
    sourceTag: 'type:adapter',
    onlyDependOnLibsWithTags: [
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
  {
    sourceTag: 'type:service',
    onlyDependOnLibsWithTags: [
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
  {
    sourceTag: 'type:cli',
    onlyDependOnLibsWithTags: [
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
  {
    sourceTag: 'type:launcher',
    onlyDependOnLibsWithTags: [
      'type:service',
      'type:cli',
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
  {
    sourceTag: 'type:bench',
    onlyDependOnLibsWithTags: [
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
  {
    sourceTag: 'type:test',
    onlyDependOnLibsWithTags: [
      'type:test',
      'type:adapter',
      'type:core',
      'type:contracts',
      'type:util',
      'type:config',
    ],
  },
];

// Test files may additionally use the test helpers; everything else stays as strict.
const testConstraints = productionConstraints.map((c) =>
  c.sourceTag === 'type:test'
    ? c
    : { ...c, onlyDependOnLibsWithTags: [...c.onlyDependOnLibsWithTags, 'type:test'] },
);

/** The import paths of the application projects (services/*): @tda/service-<name>. */
const SERVICE_IMPORTS = [
  '@tda/service-orchestrator',
  '@tda/service-cli',
  '@tda/service-local-stack',
  '@tda/service-worker-*',
];

const testFiles = ['**/*.spec.ts', '**/*.int-spec.ts', '**/testing/**/*.ts'];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/tmp/**',
      '**/.nx/**',
      'libs/contracts/src/generated/**',
      '**/*.mjs',
      '**/*.js',
    ],
  },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          // NX refuses every import of an application project; the local launcher composes the
          // services on purpose. The service -> service ban is kept by the rule below.
          // (@tda/service-runtime is a library and checked like one.)
          allow: SERVICE_IMPORTS,
          depConstraints: productionConstraints,
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'error',
    },
  },
  {
    files: testFiles,
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: SERVICE_IMPORTS,
          depConstraints: testConstraints,
        },
      ],
    },
  },
  {
    // Services never import services (DESIGN.md §1); only the local launcher composes them.
    files: ['services/**/*.ts'],
    ignores: ['services/local-stack/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@tda/service-*', '!@tda/service-runtime', '!@tda/service-runtime/*'],
              message: 'services never import other services; move shared code into a lib',
            },
          ],
        },
      ],
    },
  },
  {
    // The step harness stays readable in phases (issue 11): small files, functions on a screen.
    files: ['libs/worker-kit/src/**/*.ts'],
    ignores: testFiles,
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // One coded error base (DESIGN.md §6): every error family extends TdaError, so every edge maps
    // any of them by code. Tests and testing helpers may throw plain errors. The console is a
    // browser bundle that imports server libraries as types only: its ApiError mirrors the wire
    // body ({code, message, details}) instead.
    files: ['libs/**/*.ts', 'services/**/*.ts'],
    ignores: [...testFiles, 'libs/contracts/src/tda-error.ts', 'services/console/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ':matches(ClassDeclaration, ClassExpression)[superClass.name=/^(Error|TypeError|RangeError)$/]',
          message: 'errors extend TdaError (@tda/contracts): a code, retryable, details, cause',
        },
      ],
    },
  },
  {
    // The web console: React rules, the same import boundaries for .tsx, and server libraries
    // (@tda/*) as types only, so nothing of the server reaches the browser bundle.
    files: ['services/console/**/*.ts', 'services/console/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      ...reactHooks.configs.flat.recommended.rules,
      'react-hooks/exhaustive-deps': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: SERVICE_IMPORTS,
          depConstraints: testConstraints,
        },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@tda/*'],
              allowTypeImports: true,
              message: 'the console imports server libraries as types only (import type)',
            },
          ],
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      'no-console': 'error',
    },
  },
  {
    // Tools and tests may print; they are not services.
    files: ['tools/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  prettier,
);
