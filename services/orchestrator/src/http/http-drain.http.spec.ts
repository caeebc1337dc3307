import { once, type EventEmitter } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestOrchestrator } from '../testing/orchestrator.harness';

describe('HTTP drain on close', () => {
  it('cuts a connection whose request never completes, so close() ends', async () => {
    const orchestrator = await startTestOrchestrator({ httpDrainMs: 100 });
    const { port } = new URL(orchestrator.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const server: EventEmitter = orchestrator.app.getHttpServer();
    const received = once(server, 'request');
    // A body announced and never sent: without the drain, close() waits for Node's request
    // timeout (300 s).
    socket.write(
      'POST /runs HTTP/1.1\r\nHost: tda\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\n\r\n',
    );
    await received;
    const cut = once(socket, 'close');
    await orchestrator.close();
    await cut;
    expect(socket.destroyed).toBe(true);
  });

  it('answers a request in progress that completes within the grace', async () => {
    const orchestrator = await startTestOrchestrator({ httpDrainMs: 5_000 });
    const { port } = new URL(orchestrator.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const server: EventEmitter = orchestrator.app.getHttpServer();
    const received = once(server, 'request');
    socket.write(
      'POST /runs HTTP/1.1\r\nHost: tda\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\nConnection: close\r\n\r\n',
    );
    await received; // the server holds the request, its body still to come
    const closed = orchestrator.close();
    socket.write('{}'); // the body arrives after the shutdown began
    await once(socket, 'close');
    await closed;
    // Answered (401: no token), not cut.
    expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 401 /);
  });
});
