// Kozmo's cell map: virtual clusters -> cells -> nodes -> GPUs, the waiting gangs and why, and
// the jobs and tasks. Reads /v1/inspect/cellmap once, then watches /v1/inspect/cellmap/since/N
// (each answer carries only the nodes that changed); jobs and tasks are listed from Kubernetes
// every few seconds when the page is served by the API server (kozmo local, kubectl proxy).
// No library, nothing fetched from elsewhere. Every name is set as text, never as markup.
'use strict';

(function () {
  // ---- where to ask, with which credential ------------------------------------------------
  const hashToken = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
  if (hashToken) {
    sessionStorage.setItem('kozmo-token', hashToken);
    history.replaceState(null, '', location.pathname + location.search); // the token leaves the address bar
  }
  const token = sessionStorage.getItem('kozmo-token');
  // Behind the API server's service proxy (.../services/NAME/proxy/ui/), inspect is under the
  // proxy and Kubernetes at the root; otherwise both sit beside /ui/.
  const proxied = location.pathname.match(/^(.*\/services\/[^/]+\/proxy)\/ui\/?/);
  const inspectBase = proxied ? location.origin + proxied[1] + '/' : new URL('../', location.href).href;
  const apiBase = proxied ? location.origin + '/' : inspectBase;

  function request(url, signal) {
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = 'Bearer ' + token;
    return fetch(url, { headers, signal, cache: 'no-store', credentials: 'same-origin' });
  }

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function say(text, error) {
    const s = $('status');
    s.textContent = text;
    s.classList.toggle('error', !!error);
  }
  function age(seconds) {
    if (seconds < 60) return Math.floor(seconds) + 's';
    if (seconds < 3600) return Math.floor(seconds / 60) + 'm';
    if (seconds < 86400) return Math.floor(seconds / 3600) + 'h';
    return Math.floor(seconds / 86400) + 'd';
  }

  // ---- colours: one per VC, states as the legend says --------------------------------------
  const palette = ['#1971c2', '#2f9e44', '#e8590c', '#9c36b5', '#0c8599', '#d6336c', '#5c940d', '#f08c00',
                   '#3b5bdb', '#a61e4d', '#087f5b', '#862e9c'];
  const vcColour = new Map();
  function colourOf(vc) {
    if (!vcColour.has(vc)) vcColour.set(vc, palette[vcColour.size % palette.length]);
    return vcColour.get(vc);
  }
  const stateNames = { f: 'free', b: 'bound', o: 'opportunistic', r: 'reserved', p: 'being preempted',
                       x: 'bad node', e: "another scheduler's pod" };
  function gpuElement(run) {
    const g = el('span', 'gpu s-' + run[0]);
    const gang = run[2] || '', vc = run[3] || '';
    if (gang) {
      g.dataset.gang = gang;
      g.dataset.vc = vc;
      if (run[0] === 'r') g.style.borderColor = colourOf(vc);
      else if (run[0] !== 'x') g.style.backgroundColor = colourOf(vc);
    }
    g.dataset.state = stateNames[run[0]] || run[0];
    g.title = (stateNames[run[0]] || run[0]) + (gang ? ': ' + gang + (vc ? ' (VC ' + vc + ')' : '') : '');
    return g;
  }
  function legend() {
    const l = $('legend');
    for (const s of ['f', 'b', 'o', 'r', 'p', 'x', 'e']) {
      const item = el('span');
      const g = gpuElement([s, 1]);
      if ('bop'.includes(s)) g.style.backgroundColor = '#868e96'; // a VC's colour on the map
      item.append(g, document.createTextNode(stateNames[s]));
      l.append(item);
    }
  }

  // ---- the map ------------------------------------------------------------------------------
  const map = { version: 0, cells: [], vcs: [], waiting: [], waitingTotal: 0, children: [], tops: [] };
  const open = new Set(); // keys of opened cells and groups
  let opened = false;
  const maxTops = 40; // more top-level cells than this are shown in groups that open on click

  function takeFull(doc) {
    map.cells = doc.cells;
    map.children = map.cells.map(() => []);
    map.tops = [];
    map.cells.forEach((c, i) => (c.parent >= 0 ? map.children[c.parent].push(i) : map.tops.push(i)));
    // A small cluster opens whole at first; a large one shows its aggregates.
    if (!opened && map.cells.filter((c) => c.gpus).length <= 64)
      map.cells.forEach((c, i) => { if (!c.gpus) open.add('c' + i); });
    opened = true;
  }
  function take(doc) {
    if (doc.full) takeFull(doc);
    else for (const c of doc.cells) if (map.cells[c.index]) map.cells[c.index].gpus = c.gpus;
    map.version = doc.version;
    map.vcs = doc.virtualClusters || [];
    map.waiting = doc.waitingGangs || [];
    map.waitingTotal = doc.waitingTotal || 0;
    map.vcs.forEach((v) => colourOf(v.name));
    render();
  }

  // GPUs under a cell by state, and by VC for the bound ones.
  function countUnder(indices) {
    const c = { total: 0, f: 0, b: 0, o: 0, r: 0, p: 0, x: 0, e: 0, byVc: new Map(), nodes: 0 };
    const stack = [...indices];
    while (stack.length) {
      const i = stack.pop();
      const cell = map.cells[i];
      if (cell.gpus) {
        c.nodes++;
        for (const r of cell.gpus) {
          c.total += r[1];
          c[r[0]] += r[1];
          if (r[3] && (r[0] === 'b' || r[0] === 'o' || r[0] === 'p')) c.byVc.set(r[3], (c.byVc.get(r[3]) || 0) + r[1]);
        }
      } else stack.push(...map.children[i]);
    }
    return c;
  }
  function bar(c) {
    const b = el('div', 'bar');
    if (!c.total) return b;
    for (const [vc, n] of c.byVc) {
      const s = el('span');
      s.style.width = (100 * n) / c.total + '%';
      s.style.backgroundColor = colourOf(vc);
      s.title = 'VC ' + vc + ': ' + n;
      b.append(s);
    }
    for (const [k, colour] of [['x', 'var(--bad)'], ['e', 'var(--other)'], ['r', '#868e96']]) {
      if (!c[k]) continue;
      const s = el('span');
      s.style.width = (100 * c[k]) / c.total + '%';
      s.style.backgroundColor = colour;
      s.title = stateNames[k] + ': ' + c[k];
      b.append(s);
    }
    return b;
  }
  function nodeBox(i) {
    const cell = map.cells[i];
    const box = el('div', 'node');
    box.dataset.node = cell.node;
    box.dataset.address = cell.address;
    if (cell.gpus.some((r) => r[0] === 'x')) box.classList.add('bad');
    box.append(el('div', 'name', cell.node || cell.address));
    const gpus = el('div', 'gpus');
    for (const r of cell.gpus) for (let k = 0; k < r[1]; k++) gpus.append(gpuElement(r));
    box.append(gpus);
    return box;
  }
  // A cell (or a group of top-level cells) as a row that opens onto its children.
  function cellRow(key, title, type, indices, childrenOf) {
    const c = countUnder(indices);
    const row = el('div', 'cell');
    row.dataset.key = key;
    const head = el('div', 'head');
    const isOpen = open.has(key);
    head.append(el('span', 'toggle', isOpen ? '▾' : '▸'), el('span', 'title', title), el('span', 'type', type),
      el('span', 'counts', (c.total - c.f - c.x - c.e) + ' of ' + c.total + ' GPUs used · ' + c.f + ' free' +
        (c.x ? ' · ' + c.x + ' bad' : '') + ' · ' + c.nodes + (c.nodes === 1 ? ' node' : ' nodes')), bar(c));
    head.addEventListener('click', () => {
      if (open.has(key)) open.delete(key); else open.add(key);
      render();
    });
    row.append(head);
    if (isOpen) {
      const body = el('div', 'body');
      const kids = childrenOf();
      const nodes = el('div', 'nodes');
      for (const k of kids) {
        if (map.cells[k].gpus) nodes.append(nodeBox(k));
        else body.append(cellRow('c' + k, map.cells[k].address, map.cells[k].type, [k], () => map.children[k]));
      }
      if (nodes.childElementCount) body.append(nodes);
      row.append(body);
    }
    return row;
  }
  function renderCells() {
    const root = $('cells');
    const out = document.createDocumentFragment();
    const tops = map.tops;
    if (tops.length <= maxTops) {
      const loose = el('div', 'nodes');
      for (const t of tops) {
        if (map.cells[t].gpus) loose.append(nodeBox(t));
        else out.append(cellRow('c' + t, map.cells[t].address, map.cells[t].type, [t], () => map.children[t]));
      }
      if (loose.childElementCount) out.append(loose);
    } else {
      const size = Math.ceil(tops.length / maxTops);
      for (let g = 0; g * size < tops.length; g++) {
        const members = tops.slice(g * size, (g + 1) * size);
        const first = map.cells[members[0]], last = map.cells[members[members.length - 1]];
        out.append(cellRow('g' + g, (first.node || first.address) + ' … ' + (last.node || last.address),
          members.length + ' top-level cells', members, () => members));
      }
    }
    root.replaceChildren(out);
  }
  function renderVcs() {
    const root = $('vcs');
    const out = document.createDocumentFragment();
    for (const v of map.vcs) {
      const card = el('div', 'vc');
      card.dataset.vc = v.name;
      const name = el('div', 'name');
      const sw = el('span', 'swatch');
      sw.style.backgroundColor = colourOf(v.name);
      name.append(sw, document.createTextNode(v.name));
      card.append(name, el('div', 'figures', v.usedGPUs + ' used · ' + v.freeGPUs + ' free of ' + v.guaranteedGPUs +
        ' guaranteed' + (v.borrowedGPUs ? ' · ' + v.borrowedGPUs + ' borrowed' : '')));
      const b = el('div', 'bar');
      const used = el('span');
      used.style.width = v.guaranteedGPUs ? (100 * v.usedGPUs) / v.guaranteedGPUs + '%' : '0';
      used.style.backgroundColor = colourOf(v.name);
      b.append(used);
      card.append(b);
      out.append(card);
    }
    if (!map.vcs.length) out.append(el('div', 'hint', 'no virtual clusters (the scheduler places on the physical cluster)'));
    root.replaceChildren(out);
  }
  function renderWaiting() {
    const body = $('waiting').tBodies[0];
    const out = document.createDocumentFragment();
    const now = Date.now();
    for (const w of map.waiting) {
      const tr = el('tr');
      tr.dataset.gang = w.name;
      const seconds = w.since ? Math.max(0, (now - w.since) / 1000) : w.waitingSeconds;
      tr.append(el('td', '', w.name), el('td', '', w.virtualCluster || '—'), el('td', '', w.priority), el('td', '', w.pods),
        el('td', '', w.gpus), el('td', '', age(seconds)), el('td', 'reason', (w.reasonKind ? w.reasonKind + ': ' : '') + w.reason));
      out.append(tr);
    }
    body.replaceChildren(out);
    $('waiting-count').textContent = map.waitingTotal > map.waiting.length
      ? map.waiting.length + ' of ' + map.waitingTotal + ' shown' : String(map.waitingTotal);
  }
  function render() {
    renderVcs();
    renderCells();
    renderWaiting();
    say('live · version ' + map.version + ' · ' + new Date().toLocaleTimeString());
  }

  async function watchMap() {
    let backoff = 1000;
    let asked = 0;
    for (;;) {
      // At most one question a second: a server that answers at once (the extender's, which
      // keeps no journal) is polled, not hammered.
      const wait = asked + 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      asked = Date.now();
      try {
        const path = map.version ? 'v1/inspect/cellmap/since/' + map.version : 'v1/inspect/cellmap';
        const res = await request(inspectBase + path);
        if (!res.ok) {
          let message = res.statusText;
          try { message = (await res.json()).message || message; } catch (e) { /* not JSON */ }
          message = res.status + ' ' + message;
          if (res.status === 401 || res.status === 403)
            message += ' — open the URL `kozmo local` printed (it carries the token), or go through `kubectl proxy`';
          throw new Error(message);
        }
        take(await res.json());
        backoff = 1000;
      } catch (e) {
        say('cannot read the cell map: ' + e.message + ' (retrying)', true);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 15000);
      }
    }
  }

  // ---- jobs and tasks: Kubernetes lists ---------------------------------------------------------
  const kinds = [
    ['PyTorchJob', 'apis/kubeflow.org/v1/pytorchjobs'], ['TFJob', 'apis/kubeflow.org/v1/tfjobs'],
    ['MPIJob', 'apis/kubeflow.org/v1/mpijobs'], ['XGBoostJob', 'apis/kubeflow.org/v1/xgboostjobs'],
    ['PaddleJob', 'apis/kubeflow.org/v1/paddlejobs'], ['JAXJob', 'apis/kubeflow.org/v1/jaxjobs'],
    ['TaskExecution', 'apis/kozmo.io/v1alpha1/taskexecutions'],
  ];
  const jobs = new Map(); // kind/uid -> row data
  function phaseOf(kind, o) {
    const st = o.status || {};
    if (kind === 'TaskExecution') return st.phase || 'Pending';
    const conds = (st.conditions || []).filter((c) => c.status === 'True');
    return conds.length ? conds[conds.length - 1].type : 'Created';
  }
  function renderJobs() {
    const body = $('jobs').tBodies[0];
    const out = document.createDocumentFragment();
    const rows = [...jobs.values()].sort((a, b) => (a.ns + a.name).localeCompare(b.ns + b.name));
    for (const j of rows) {
      const tr = el('tr');
      tr.dataset.job = j.kind + '/' + j.ns + '/' + j.name;
      tr.append(el('td', '', j.kind), el('td', '', j.ns), el('td', '', j.name), el('td', 'phase-' + j.phase, j.phase),
        el('td', '', age((Date.now() - j.created) / 1000)));
      out.append(tr);
    }
    body.replaceChildren(out);
  }
  function keep(kind, type, o) {
    const key = kind + '/' + o.metadata.uid;
    if (type === 'DELETED') jobs.delete(key);
    else jobs.set(key, { kind, ns: o.metadata.namespace, name: o.metadata.name, phase: phaseOf(kind, o),
                         created: Date.parse(o.metadata.creationTimestamp) || Date.now() });
  }
  // Re-listed every few seconds, one request at a time: a browser holds six connections to a
  // host over HTTP/1.1, and a watch per kind would take them all from the map's watch.
  async function listJobs() {
    let readable = false;
    for (const [kind, path] of kinds) {
      try {
        const res = await request(apiBase + path);
        if (!res.ok) continue; // 404: the kind is not installed, or no API server here
        const doc = await res.json();
        readable = true;
        for (const key of [...jobs.keys()]) if (key.startsWith(kind + '/')) jobs.delete(key);
        for (const o of doc.items || []) keep(kind, 'ADDED', o);
      } catch (e) { /* the next round asks again */ }
    }
    $('jobs-note').textContent = readable ? ''
      : 'not readable here: open the page through the API server (kozmo local, or kubectl proxy)';
    renderJobs();
    setTimeout(listJobs, 5000);
  }

  legend();
  watchMap();
  listJobs();
  setInterval(renderWaiting, 5000); // ages
})();
