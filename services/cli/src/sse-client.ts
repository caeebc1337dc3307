/** One server-sent event as the CLI uses it. */
export interface ServerEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body incrementally (WHATWG HTML §9.2 framing: `field: value` lines,
 * a blank line ends an event, `:` lines are comments such as heartbeats).
 */
export async function* readServerEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id?: string; event: string; data: string[] } = { event: 'message', data: [] };
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.search(/\r?\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
      if (line === '') {
        if (current.data.length > 0) {
          yield {
            ...(current.id === undefined ? {} : { id: current.id }),
            event: current.event,
            data: current.data.join('\n'),
          };
        }
        current = { event: 'message', data: [] };
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') current.id = value;
        else if (field === 'event') current.event = value;
        else if (field === 'data') current.data.push(value);
      }
      newline = buffer.search(/\r?\n/);
    }
  }
}
