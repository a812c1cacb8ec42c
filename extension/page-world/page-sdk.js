// MAIN world, top frame, document_start, only on the sites the user allows
// (worker/content-scripts.js registers it): defines window.tabwire for the page (specs/page-sdk.md). It talks only to
// isolated/relay.js, by synchronous events on a private link node (below); values cross as JSON
// text, checked here so a bad value fails in the page's own call with a clear error. The
// extension's worker checks them all again: these checks are for the page's developer, not a
// defence.
(() => {
  if ('tabwire' in window) return;
  const VERSION = '0.1.0';
  const MAX_JSON = 64 * 1024 * 1024; // Chrome's limit for one message to the host
  const MAX_EVENT = 1024 * 1024; // one pushEvent: events are meant to be small and many
  const MAX_DEPTH = 64; // arrays/objects inside one another; the top value is level 1

  // The link to the relay (isolated/relay.js): a node the relay creates and never puts in the
  // document. The relay runs once the document is parsed (running it earlier would hold every
  // page of an allowed site back by the isolated world's start), so page scripts run before
  // it; the link must still be out of their reach:
  //  - the relay offers its node in a `tabwire:relay` event on window; this script's listener,
  //    the first on window (no page script has run yet), stops it there, so no page script
  //    hears of the node;
  //  - an offer counts only if whoever made it reads a secret that only the extension can read:
  //    an attribute inside a closed shadow root this script keeps (`chrome.dom` opens closed
  //    roots for the extension's isolated world, and nothing opens them for a page). A page
  //    script that offers a node of its own is sent the root's host and learns nothing.
  // An event dispatched on the node runs the other world's listener at once, in the same task.
  // What the link needs from the page's world is taken now, before a page script could
  // replace it.
  const Custom = CustomEvent;
  const Mouse = MouseEvent;
  const call = Function.prototype.call;
  const dispatch = call.bind(EventTarget.prototype.dispatchEvent);
  const listen = call.bind(EventTarget.prototype.addEventListener);
  const unlisten = call.bind(EventTarget.prototype.removeEventListener);
  const stopHere = call.bind(Event.prototype.stopImmediatePropagation);
  const detailOf = call.bind(Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail').get);
  const relatedOf = call.bind(Object.getOwnPropertyDescriptor(MouseEvent.prototype, 'relatedTarget').get);
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const secret = Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join('-');
  const proof = document.createElement('span');
  const hidden = document.createElement('i');
  hidden.setAttribute('data-tabwire', secret);
  proof.attachShadow({ mode: 'closed' }).append(hidden);
  let link = null;
  const MAX_EARLY = 1000; // values (state, events) kept for the relay before it connects
  const early = []; // messages sent before the relay took the link (those of the page's load)
  const fromLink = (e) => fromExt(unpack(detailOf(e)));
  listen(window, 'tabwire:relay', (e) => {
    stopHere(e);
    const node = relatedOf(e);
    let said = null;
    const hear = (ev) => {
      said = detailOf(ev);
    };
    try {
      listen(node, 'tabwire:proved', hear);
      dispatch(node, new Mouse('tabwire:prove', { relatedTarget: proof }));
      unlisten(node, 'tabwire:proved', hear);
    } catch {
      return; // not a node
    }
    if (said !== secret) return;
    // The extension's relay; a second one comes after the extension was reloaded.
    if (link) unlisten(link, 'tabwire:page', fromLink);
    link = node;
    listen(link, 'tabwire:page', fromLink);
    for (const s of early.splice(0)) dispatch(link, new Custom('tabwire:ext', { detail: s }));
  }, true);

  // One string per message: its fields but `json` as JSON, then a newline and `json` as it is
  // (JSON text holds no raw newline), so a value is never encoded twice.
  function toExt({ json, ...head }) {
    const s = json === undefined ? stringify(head) : `${stringify(head)}\n${json}`;
    if (link) dispatch(link, new Custom('tabwire:ext', { detail: s }));
    // Only values count against the limit: what says the page has a provider or commands
    // always waits (at most one of each per microtask).
    else if (early.length < MAX_EARLY || (head.type !== 'state' && head.type !== 'event')) early.push(s);
    else if (head.n) {
      const p = pending.get(head.n);
      pending.delete(head.n);
      p?.reject(Object.assign(new Error(`tabwire: the page sent more than ${MAX_EARLY} values before tabwire connected to it (it does once the page is parsed); this one was not delivered. Send fewer while the page loads`), { code: 'rate_limited' }));
    }
  }

  function unpack(s) {
    const cut = s.indexOf('\n');
    const msg = parse(cut < 0 ? s : s.slice(0, cut));
    if (cut >= 0) msg.json = s.slice(cut + 1);
    return msg;
  }

  let provider = null;
  const commands = new Map(); // type → fn(payload)
  const drainedFns = new Set();
  const pending = new Map(); // message number → { resolve, reject }, in number order
  let sent = 0;

  // JSON text of `value`, or a TypeError/RangeError saying what is wrong (also logged).
  function encode(value, what, max = MAX_JSON) {
    let json;
    try {
      json = JSON.stringify(value, (key, v) => {
        const t = typeof v;
        if (t === 'function' || t === 'symbol') throw new TypeError(`it holds a ${t} ${key ? `at key "${key}"` : 'at the top'}`);
        return v;
      });
      if (json === undefined) throw new TypeError('it is undefined');
    } catch (e) {
      throw logged(new TypeError(`tabwire: ${what} is not JSON-serializable: ${e.message}. Use plain objects, arrays, strings, finite numbers, booleans and null — no cycles, functions or BigInt.`));
    }
    if (json.length > max)
      throw logged(new RangeError(`tabwire: ${what} is ${(json.length / 1048576).toFixed(1)} MiB as JSON, over the ${max / 1048576} MiB limit; send less (a summary, or pages of it).`));
    if (deeperThan(value, MAX_DEPTH))
      throw logged(new TypeError(`tabwire: ${what} is nested deeper than ${MAX_DEPTH} levels (objects and arrays inside one another); send a flatter value.`));
    return json;
  }

  // Whether `value` nests arrays and objects more than `max` levels deep (the top value is
  // level 1), walking the value itself: the page hears at once, in its own call. (The worker
  // checks the JSON text again: a value's toJSON can return more than this walk sees.)
  function deeperThan(value, max, level = 1) {
    if (value === null || typeof value !== 'object') return false;
    if (level > max) return true;
    for (const key in value) if (Object.hasOwn(value, key) && deeperThan(value[key], max, level + 1)) return true;
    return false;
  }

  function logged(err) {
    console.error(err.message);
    return err;
  }

  // Post a numbered message; the promise settles when the extension acks it.
  function send(type, json) {
    const n = ++sent;
    const done = new Promise((resolve, reject) => pending.set(n, { resolve, reject }));
    toExt({ type, n, json });
    return done;
  }

  let syncQueued = false;
  function sync() {
    if (syncQueued) return;
    syncQueued = true;
    queueMicrotask(() => {
      syncQueued = false;
      toExt({ type: 'sync', provider: provider !== null });
    });
  }

  // An ack: the numbers in `failed` failed, every other one up to `upto` arrived.
  function settle(upto, failed) {
    for (const { n, error } of Array.isArray(failed) ? failed : []) {
      pending.get(n)?.reject(Object.assign(new Error(`tabwire: ${error?.message}`), { code: error?.code }));
      pending.delete(n);
    }
    for (const [n, p] of pending) {
      if (n > upto) break;
      pending.delete(n);
      p.resolve();
    }
  }

  function failAll(reason) {
    for (const p of pending.values()) p.reject(Object.assign(new Error(`tabwire: ${reason}; this value may not have been delivered`), { code: 'browser_disconnected' }));
    pending.clear();
  }

  async function perform({ type, name, payload, count }) {
    if (type === 'get_state') {
      if (!provider) throw refusal('no_handler', 'this page has no provideState function');
      return encode(await guarded(provider, undefined, 'the provideState function'), 'the value provideState returned');
    }
    if (type === 'command') {
      const fn = commands.get(name);
      if (!fn) {
        const known = [...commands.keys()].map((t) => JSON.stringify(t)).join(', ') || 'none';
        throw refusal('no_handler', `this page has no onCommand handler for ${JSON.stringify(name)}; it handles: ${known}`);
      }
      const what = webmcpTools.has(name) ? `the execute function of WebMCP tool ${JSON.stringify(name)}` : `the onCommand(${JSON.stringify(name)}) handler`;
      const result = await guarded(fn, payload, what);
      const json = encode(result === undefined ? null : result, `the value ${what} returned`);
      if (provider) await pushProvided(); // the state the command left, before its reply
      return json;
    }
    if (type === 'drained') {
      for (const fn of drainedFns) {
        try {
          fn(count);
        } catch (e) {
          console.error('tabwire: an onDrained callback threw:', e);
        }
      }
      return '{}';
    }
    throw refusal('page_error', `the extension asked for ${JSON.stringify(type)}, which this SDK (version ${VERSION}) does not know; update the extension`);
  }

  async function guarded(fn, arg, what) {
    try {
      return await fn(arg);
    } catch (e) {
      console.error(`tabwire: ${what} threw:`, e);
      throw refusal('page_error', `${what} threw: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    }
  }

  async function pushProvided() {
    try {
      send('state', encode(await provider(), 'the value provideState returned')).catch(() => {});
    } catch (e) {
      console.error('tabwire: no state_update after the command:', e);
    }
  }

  function refusal(code, message) {
    return Object.assign(new Error(message), { refusal: { code, message } });
  }

  async function answer(call) {
    const reply = { type: 'reply', id: call.id };
    try {
      reply.json = await perform(call);
    } catch (e) {
      reply.error = e.refusal ?? { code: 'page_error', message: e.message };
    }
    toExt(reply);
  }

  // What the relay sends: acks, calls, workflow states.
  function fromExt(d) {
    if (d.type === 'ack') settle(d.upto, d.failed);
    else if (d.type === 'lost') failAll(d.reason);
    else if (d.type === 'workflow') workflowChanged(d);
    else if (d.type === 'echo') toExt({ type: 'reply', id: d.id, json: 'null' }); // a hop diagnose times
    else if (Number.isSafeInteger(d.id)) answer(d); // a call: get_state, command, drained
  }

  // Workflows followed with onWorkflow: JSON [project, session] → { fns, json (the last state) }.
  const followed = new Map();
  const MAX_FOLLOWED = 16;

  function workflowChanged(d) {
    if (typeof d.project !== 'string' || typeof d.session !== 'string' || typeof d.json !== 'string') return;
    const w = followed.get(JSON.stringify([d.project, d.session]));
    if (!w) return;
    w.json = d.json;
    for (const fn of w.fns) tellWorkflow(fn, d.json);
  }

  // Each callback gets its own copy: one that changes it cannot change what another sees.
  function tellWorkflow(fn, json) {
    try {
      fn(JSON.parse(json));
    } catch (e) {
      console.error('tabwire: an onWorkflow callback threw:', e);
    }
  }

  // ---- Declared commands (specs/page-sdk.md, "Declared commands") ----
  // onCommand's third argument and app(name) describe the page's commands to the assistant. The
  // SDK sends the whole list (one `commands` message per microtask of changes); the extension's
  // worker checks it again and refuses a bad one whole, which rejects here and is logged.
  let appName = null;
  const declarations = new Map(); // type → the command's declaration, as sent
  let declareQueued = false;

  // The declaration of command `type` as sent, or a TypeError (thrown by onCommand) saying
  // what is wrong with it.
  function declaredCommand(type, d) {
    if (d === undefined) return { type };
    const bad = (what) => logged(new TypeError(`tabwire: onCommand(${JSON.stringify(type)}, fn, declaration): ${what}`));
    if (d === null || typeof d !== 'object' || Array.isArray(d)) throw bad('the declaration must be an object {description, params, result?, readOnly?, destructive?}');
    if (d.description != null && typeof d.description !== 'string') throw bad('description must be a string');
    for (const key of ['params', 'result'])
      if (d[key] != null && (typeof d[key] !== 'object' || Array.isArray(d[key]))) throw bad(`${key} must be a JSON Schema object, e.g. {type: "object", properties: {…}}`);
    for (const key of ['readOnly', 'destructive']) if (d[key] != null && typeof d[key] !== 'boolean') throw bad(`${key} must be true or false`);
    const { description, params, result, readOnly, destructive } = d;
    const out = { type, declared: true, description, params, result, readOnly, destructive };
    encode(out, `the declaration of command ${JSON.stringify(type)}`); // JSON, and not too deep
    return out;
  }

  // Sends the list once per microtask of changes; every call of one microtask gets the same
  // promise: it resolves when the extension took the list and rejects when it refused it.
  let declaring = null;
  function declare() {
    if (declareQueued) return declaring;
    declareQueued = true;
    declaring = new Promise((resolve, reject) => {
      queueMicrotask(() => {
        declareQueued = false;
        const json = JSON.stringify({ app: appName, commands: [...declarations.values()] });
        send('commands', json).then(resolve, (e) => {
          console.error(`tabwire: the extension refused the command declarations: ${e.message}`);
          reject(e);
        });
      });
    });
    declaring.catch(() => {});
    return declaring;
  }

  // Handle command `type` with fn, declared as `declared`; returns the function that removes
  // it (if it is still fn).
  function addCommand(type, fn, declared) {
    commands.set(type, fn);
    declarations.set(type, declared);
    sync();
    declare();
    return () => {
      if (commands.get(type) !== fn) return;
      commands.delete(type);
      declarations.delete(type);
      declare();
    };
  }

  const checkFn = (fn, what) => {
    if (typeof fn !== 'function') throw logged(new TypeError(`tabwire: ${what} needs a function, got ${fn === null ? 'null' : typeof fn}`));
  };

  const tabwire = {
    version: VERSION,

    // Publish the page's state: kept by the extension for page.get_state, sent as state_update.
    setState(state) {
      return send('state', encode(state, 'the state passed to setState'));
    },

    // Let the extension ask for the state when it needs it; fn may return a Promise.
    provideState(fn) {
      checkFn(fn, 'provideState');
      provider = fn;
      sync();
      return () => {
        if (provider === fn) provider = null;
        sync();
      };
    },

    // Handle page.command calls of this type; fn(payload) may return a Promise. `declaration`
    // ({description, params, result?, readOnly?, destructive?}) tells the assistant what it does.
    onCommand(type, fn, declaration) {
      if (typeof type !== 'string' || type === '') throw logged(new TypeError('tabwire: onCommand needs a command type (a non-empty string)'));
      checkFn(fn, 'onCommand');
      const declared = declaredCommand(type, declaration);
      webmcpTools.delete(type); // one handler per type: this one replaces a WebMCP tool's
      return addCommand(type, fn, declared);
    },

    // Name this app for the assistant: its commands become tools named `<name>__<command>`
    // (default: the page's host name).
    app(name) {
      if (typeof name !== 'string' || name === '' || name.length > 64) throw logged(new TypeError('tabwire: app needs a name of 1 to 64 characters'));
      appName = name;
      declare();
    },

    // Send an event to the assistant (page_event).
    pushEvent(event) {
      return send('event', encode(event, 'the event passed to pushEvent', MAX_EVENT));
    },

    // Follow a workflow session (specs/workflows.md): fn({project, session, state, graph}) runs
    // with its state now, if the extension has one, and after each change.
    onWorkflow(project, session, fn) {
      const named = (s) => typeof s === 'string' && s !== '' && s.length <= 4096;
      if (!named(project) || !named(session))
        throw logged(new TypeError('tabwire: onWorkflow needs the project (the absolute path given to start_workflow) and the session name'));
      checkFn(fn, 'onWorkflow');
      const key = JSON.stringify([project, session]);
      let w = followed.get(key);
      if (!w) {
        if (followed.size >= MAX_FOLLOWED)
          throw logged(new RangeError(`tabwire: a page follows at most ${MAX_FOLLOWED} workflows; stop following one first`));
        followed.set(key, (w = { fns: new Set(), json: null }));
        toExt({ type: 'watch', project, session, on: true });
      }
      w.fns.add(fn);
      if (w.json !== null) {
        const json = w.json;
        queueMicrotask(() => w.fns.has(fn) && tellWorkflow(fn, json));
      }
      return () => {
        w.fns.delete(fn);
        if (w.fns.size > 0 || followed.get(key) !== w) return;
        followed.delete(key);
        toExt({ type: 'watch', project, session, on: false });
      };
    },

    // fn(count) runs when the assistant has taken `count` events.
    onDrained(fn) {
      checkFn(fn, 'onDrained');
      drainedFns.add(fn);
      sync();
      return () => void drainedFns.delete(fn);
    },
  };
  Object.defineProperty(window, 'tabwire', { value: Object.freeze(tabwire), enumerable: false });

  // ---- WebMCP (specs/page-sdk.md, "WebMCP") ----
  // A page written for the web's own standard registers its tools with navigator.modelContext
  // (document.modelContext in the newest draft): where the browser has none, this defines it,
  // and each tool becomes one of the page's declared commands — the same checks, listing,
  // page tools and provenance as onCommand's. execute(input, options) runs on send_command; its
  // result goes back as the command's.
  const webmcpTools = new Map(); // name → { remove }
  const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
  const Domx = DOMException;

  function registerTool(tool, options) {
    const refuse = (name, message) => Promise.reject(logged(new Domx(`tabwire: registerTool: ${message}`, name)));
    if (tool === null || typeof tool !== 'object') return Promise.reject(logged(new TypeError('tabwire: registerTool needs a tool {name, description, inputSchema?, execute, annotations?}')));
    const { name, description, inputSchema, execute, annotations } = tool;
    if (typeof execute !== 'function') return Promise.reject(logged(new TypeError('tabwire: registerTool: execute must be a function')));
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      return refuse('InvalidStateError', `the tool name ${JSON.stringify(String(name).slice(0, 80))} is not 1 to 64 letters, digits, "_", "-" or "."`);
    if (typeof description !== 'string' || description === '') return refuse('InvalidStateError', `tool ${JSON.stringify(name)} needs a description`);
    if (webmcpTools.has(name) || commands.has(name)) return refuse('InvalidStateError', `a tool named ${JSON.stringify(name)} is already registered`);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    let params;
    if (inputSchema !== undefined) {
      try {
        params = JSON.parse(JSON.stringify(inputSchema) ?? 'null');
      } catch (e) {
        return Promise.reject(logged(e));
      }
      if (params !== null && typeof params === 'object' && !Array.isArray(params) && !('type' in params)) params = { type: 'object', ...params };
      const bad = badParamName(params);
      if (bad !== null)
        return refuse('InvalidStateError', `tool ${JSON.stringify(name)}: the parameter name ${JSON.stringify(bad.slice(0, 40))} is not allowed: a parameter name is a letter or _, then letters, digits or _, 64 characters at most`);
    }
    const declaration = { description, params: params ?? undefined };
    if (annotations?.readOnlyHint != null) declaration.readOnly = Boolean(annotations.readOnlyHint);
    if (annotations?.consequentialHint != null) declaration.destructive = Boolean(annotations.consequentialHint);
    let declared;
    try {
      declared = declaredCommand(name, declaration);
    } catch (e) {
      return Promise.reject(e);
    }
    // The draft passes {signal}; earlier drafts passed a client with requestUserInteraction.
    const run = (input) => {
      const client = { signal: new AbortController().signal, requestUserInteraction: async (fn) => fn() };
      return execute.call(tool, input ?? {}, client);
    };
    const remove = addCommand(name, run, declared);
    const entry = { remove };
    webmcpTools.set(name, entry);
    const unregister = () => {
      if (webmcpTools.get(name) !== entry) return;
      webmcpTools.delete(name);
      remove();
    };
    return new Promise((resolve, reject) => {
      signal?.addEventListener?.('abort', () => {
        unregister();
        reject(signal.reason);
      }, { once: true });
      declare().then(() => resolve(undefined), (e) => {
        unregister(); // refused: the page's other tools stay offered
        reject(logged(new Domx(`tabwire: registerTool(${JSON.stringify(name)}): ${e.message}`, 'InvalidStateError')));
      });
    });
  }

  // The first parameter name of a schema (a key of `properties` or `$defs`, a `required`
  // entry, at any depth) the extension would refuse, or null: refused here, the tool alone
  // fails, not the page's whole list.
  function badParamName(schema) {
    if (schema === null || typeof schema !== 'object') return null;
    const names = [];
    if (Array.isArray(schema.required)) names.push(...schema.required);
    for (const key of ['properties', '$defs'])
      if (schema[key] && typeof schema[key] === 'object') names.push(...Object.keys(schema[key]));
    const bad = names.find((n) => typeof n === 'string' && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(n));
    if (bad !== undefined) return bad;
    for (const v of Object.values(schema)) {
      const inner = badParamName(v);
      if (inner !== null) return inner;
    }
    return null;
  }

  // By name; a draft had it take the tool itself.
  function unregisterTool(tool) {
    const name = typeof tool === 'object' && tool !== null ? tool.name : tool;
    const entry = webmcpTools.get(name);
    if (!entry) return;
    webmcpTools.delete(name);
    entry.remove();
  }

  const modelContext = {
    registerTool,
    unregisterTool,
    // Earlier drafts: provideContext({tools}) replaces the tools registered this way and
    // clearContext() removes them all.
    provideContext(context) {
      modelContext.clearContext();
      const tools = context?.tools ?? [];
      if (!Array.isArray(tools)) throw logged(new TypeError('tabwire: provideContext needs {tools: [...]}'));
      for (const tool of tools) registerTool(tool).catch(() => {});
    },
    clearContext() {
      for (const name of [...webmcpTools.keys()]) unregisterTool(name);
    },
  };
  const define = (target) => {
    if ('modelContext' in target) return; // the browser's own: left alone
    Object.defineProperty(target, 'modelContext', { value: Object.freeze(modelContext), enumerable: false });
  };
  define(Navigator.prototype);
  define(Document.prototype);
})();
