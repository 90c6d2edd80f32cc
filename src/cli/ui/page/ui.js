// The page of `kubectl jobhooks ui`: a list of every kind, one object's view, a step's logs. All
// it shows arrives over server-sent events from the plugin (watches through the user's
// kubeconfig); the HTML of an object's view is built and escaped by the plugin. The session's token
// comes in the URL's fragment, which no request carries: the page sends it with each of its own.
/* global location, history, EventSource, CSS, confirm */

const TOKEN_KEY = 'jobhooks-token'
const main = document.getElementById('main')
const statusLine = document.getElementById('status')
const logs = {
  section: document.getElementById('logs'),
  title: document.getElementById('logs-title'),
  text: document.getElementById('logs-text'),
  source: undefined
}
const view = { source: undefined, tables: new Map(), kinds: [], namespace: '', phase: '', detail: undefined }

function takeToken () {
  const match = /^#token=([A-Za-z0-9_-]+)/.exec(location.hash)
  if (match !== null) {
    sessionStorage.setItem(TOKEN_KEY, match[1])
    history.replaceState(null, '', '#/')
  }
  return sessionStorage.getItem(TOKEN_KEY)
}

const token = takeToken()

function say (message, failure = false) {
  statusLine.textContent = message
  statusLine.className = failure ? 'failure' : ''
}

function element (tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value)
  for (const child of children) node.append(child)
  return node
}

function streamUrl (path, params) {
  const query = new URLSearchParams({ ...params, token })
  return `${path}?${query}`
}

/** An EventSource whose events are JSON, each handled by its name. */
function listen (url, handlers) {
  const source = new EventSource(url)
  for (const [event, handle] of Object.entries(handlers)) {
    source.addEventListener(event, message => handle(JSON.parse(message.data)))
  }
  // The server ends a stream with `end`: without a close here EventSource would open it again.
  if (handlers.end === undefined) source.addEventListener('end', () => source.close())
  source.addEventListener('notice', message => say(JSON.parse(message.data).message))
  source.addEventListener('failure', message => say(JSON.parse(message.data).message, true))
  source.onerror = () => {
    if (source.readyState === EventSource.CONNECTING) {
      say('The connection to kubectl jobhooks ui dropped; retrying…', true)
    }
  }
  source.onopen = () => { if (statusLine.className === 'failure') say('') }
  return source
}

function closeStreams () {
  view.source?.close()
  view.source = undefined
}

// The list: a table per kind, filtered by namespace and phase.

function visibleRows (table) {
  return table.rows.filter(row =>
    (view.namespace === '' || row.namespace === view.namespace) &&
    (view.phase === '' || (table.phaseColumn >= 0 && row.cells[table.phaseColumn] === view.phase)))
}

function kindTable (kind, table) {
  const caption = element('caption', {}, kind)
  const head = element('tr', {}, ...table.head.map(name => element('th', { scope: 'col' }, name)))
  const rows = visibleRows(table).map(row => {
    const link = element('a', { href: `#/${kind}/${row.namespace}/${row.name}` }, row.name)
    const nameAt = table.head.indexOf('NAME')
    return element('tr', {}, ...row.cells.map((cell, i) => element('td', {}, i === nameAt ? link : cell)))
  })
  const empty = element('tr', {}, element('td', { colspan: String(table.head.length), class: 'empty' }, 'None'))
  return element('table', { 'data-kind': kind }, caption, element('thead', {}, head),
    element('tbody', {}, ...(rows.length > 0 ? rows : [empty])))
}

function drawList () {
  const sections = view.kinds.map(kind => {
    const table = view.tables.get(kind)
    if (table === undefined) return element('section', {}, element('h2', {}, kind), element('p', {}, 'Reading…'))
    if (table.failure !== undefined) {
      return element('section', {}, element('h2', {}, kind), element('p', {}, table.failure))
    }
    return element('section', { 'aria-label': kind }, element('h2', {}, kind), kindTable(kind, table))
  })
  const phases = new Set([...view.tables.values()]
    .flatMap(t => t.phaseColumn >= 0 ? t.rows.map(r => r.cells[t.phaseColumn]) : []))
  const phaseSelect = element('select', { id: 'phase' }, element('option', { value: '' }, 'any'),
    ...[...phases].filter(p => p !== '').sort().map(p => element('option', { value: p }, p)))
  phaseSelect.value = view.phase
  const namespaceInput = element('input', { id: 'namespace', type: 'text', value: view.namespace, placeholder: 'any' })
  const filters = element('div', { class: 'filters', role: 'search' },
    element('label', { for: 'namespace' }, 'Namespace', namespaceInput),
    element('label', { for: 'phase' }, 'Phase', phaseSelect))
  const focused = document.activeElement?.id
  main.replaceChildren(element('h2', {}, 'Workloads'), filters, ...sections)
  namespaceInput.addEventListener('input', () => { view.namespace = namespaceInput.value.trim(); drawList() })
  phaseSelect.addEventListener('change', () => { view.phase = phaseSelect.value; drawList() })
  if (focused === 'namespace' || focused === 'phase') document.getElementById(focused).focus()
}

function showList () {
  view.tables = new Map()
  view.detail = undefined
  view.source = listen(streamUrl('/api/stream/list', {}), {
    scope: scope => {
      view.kinds = scope.kinds
      document.getElementById('scope').textContent =
        scope.namespace === null ? 'every namespace' : `namespace ${scope.namespace}`
      drawList()
    },
    list: table => { view.tables.set(table.kind, table); drawList() },
    failure: failure => {
      if (failure.kind !== undefined) view.tables.set(failure.kind, { failure: failure.message })
      drawList()
    }
  })
}

// One object: its view as the plugin drew it, its actions, its steps' logs.

function showObject (kind, namespace, name) {
  view.detail = { kind, namespace, name }
  main.replaceChildren(element('p', {}, `Reading ${kind} ${namespace}/${name}…`))
  view.source = listen(streamUrl('/api/stream/object', { kind, namespace, name }), {
    detail: ({ html }) => {
      const open = [...main.querySelectorAll('tbody.fan-out details[open]')].map(d => d.closest('tbody').dataset.step)
      main.innerHTML = html
      for (const step of open) {
        main.querySelector(`tbody.fan-out[data-step="${CSS.escape(step)}"] details`)?.setAttribute('open', '')
      }
    },
    gone: ({ message }) => { say(message); view.source?.close() }
  })
}

async function act (button) {
  const { kind, namespace, name } = view.detail
  const steps = button.dataset.steps === undefined ? undefined : button.dataset.steps.split(',')
  const rerun = button.dataset.act === 'rerun'
  const stepsText = steps === undefined ? '' : rerun ? ` --step ${steps}` : ` ${steps.join(' ')}`
  const command = `kubectl jobhooks ${button.dataset.act} ${kind} ${name}${stepsText} -n ${namespace}`
  if (!confirm(`${button.textContent}?\n\nThis runs: ${command}`)) return
  const response = await fetch('/api/act', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-jobhooks-token': token },
    body: JSON.stringify({
      action: button.dataset.act, kind, namespace, name, ...(steps === undefined ? {} : { steps })
    })
  })
  const answer = await response.json()
  say(answer.message, !response.ok)
}

function openLogs (button) {
  const { namespace, name } = view.detail
  const { step, attempt, item } = button.dataset
  logs.source?.close()
  logs.text.textContent = ''
  logs.title.textContent = `Logs of ${name} ${step}${item === undefined ? '' : `[${item}]`}, attempt ${attempt}`
  logs.section.hidden = false
  const params = { namespace, name, step, attempt, follow: '1', ...(item === undefined ? {} : { item }) }
  if (item !== undefined) delete params.attempt
  logs.source = listen(streamUrl('/api/stream/logs', params), {
    log: ({ text }) => { logs.text.textContent += text },
    end: () => { logs.source.close(); logs.text.textContent += '(end of the logs)\n' },
    failure: () => logs.source.close()
  })
}

function closeLogs () {
  logs.source?.close()
  logs.section.hidden = true
}

main.addEventListener('click', event => {
  const button = event.target.closest('button')
  if (button === null) return
  if (button.classList.contains('act')) act(button).catch(error => say(String(error), true))
  else if (button.classList.contains('logs')) openLogs(button)
})
document.getElementById('logs-close').addEventListener('click', closeLogs)

function route () {
  closeStreams()
  closeLogs()
  say('')
  if (token === null) {
    const hint = 'Open the URL that kubectl jobhooks ui printed: it carries this session\'s token.'
    main.replaceChildren(element('p', {}, hint))
    return
  }
  const [kind, namespace, name] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent)
  if (kind && namespace && name) showObject(kind, namespace, name)
  else showList()
}

window.addEventListener('hashchange', route)
route()
