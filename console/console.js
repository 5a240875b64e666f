/* console.js -- gpubroker's web console: plain JavaScript, no library.
 *
 * Everything it shows comes from the daemon's API on this origin, with
 * the token the person pasted (kept in this tab's sessionStorage, sent
 * as "Authorization: Bearer", never in a URL).  It decides nothing about
 * who may do what: every action is sent, and the API's answer, refusal
 * included, is shown as the API words it.  Text from the API is put in
 * the page with textContent only. */
'use strict';

(function () {
	const TOKEN_KEY = 'gpubroker.token';
	const SVG = 'http://www.w3.org/2000/svg';
	const POLL_WAIT_S = 25;     /* the events long poll's wait */
	const REFRESH_MS = 5000;    /* what time alone changes (TTL, age) */
	const MAX_EVENTS_SHOWN = 500;
	const MAX_OFFERS_SHOWN = 200;

	const $ = (id) => document.getElementById(id);
	let session = null;         /* {name, role, team} from /v1/whoami */
	let skewMs = 0;             /* the daemon's clock minus ours */
	let current = null;         /* the view on screen: {stop()} */

	/* ---------------------------------------------------------- DOM */

	/* h('td', {class: 'num'}, 'text', node...): an element; attributes
	 * set with setAttribute, on* as listeners; children as text nodes or
	 * nodes (null and undefined skipped). */
	function h(tag, attrs, ...kids) {
		const el = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === null || v === undefined || v === false)
				continue;
			if (k.startsWith('on'))
				el.addEventListener(k.slice(2), v);
			else
				el.setAttribute(k, v === true ? '' : String(v));
		}
		for (const kid of kids.flat()) {
			if (kid === null || kid === undefined)
				continue;
			el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
		}
		return el;
	}

	function svg(tag, attrs, text) {
		const el = document.createElementNS(SVG, tag);
		for (const [k, v] of Object.entries(attrs || {}))
			el.setAttribute(k, String(v));
		if (text !== undefined)
			el.textContent = text;
		return el;
	}

	function showError(msg) {
		const e = $('error');
		e.textContent = msg || '';
		e.hidden = !msg;
	}

	function showNotice(msg) {
		const n = $('notice');
		n.textContent = msg || '';
		n.hidden = !msg;
	}

	/* A table in a scrolling box, or "Nothing here yet" (emptyText)
	 * when there are no rows.  cols: [{title, num}]; rows: <tr>s. */
	function table(id, cols, rows, emptyText, foot) {
		if (!rows.length)
			return h('p', {class: 'empty', id: id ? id + '-empty' : null}, emptyText);
		return h('div', {class: 'scroll'},
			h('table', {id: id},
				h('thead', null, h('tr', null, cols.map((c) =>
					h('th', {scope: 'col', class: c.num ? 'num' : null}, c.title)))),
				h('tbody', null, rows),
				foot ? h('tfoot', null, foot) : null));
	}

	/* Runs render(), which rebuilds part of the page, and gives the
	 * focus back to the same link in it (a refresh must not throw a
	 * keyboard user out of a table). */
	function keepFocus(container, render) {
		const a = document.activeElement;
		const href = a && container.contains(a) ? a.getAttribute('href') : null;
		render();
		if (href)
			for (const el of container.querySelectorAll('a[href]'))
				if (el.getAttribute('href') === href) {
					el.focus();
					break;
				}
	}

	function stateBadge(state) {
		const s = String(state || 'unknown');
		return h('span', {class: 'state state-' + s.replace(/[^a-z-]/g, '')}, s);
	}

	/* ------------------------------------------------------- numbers */

	function money(x) {
		if (typeof x !== 'number' || !isFinite(x))
			return '-';
		const a = Math.abs(x);
		return '$' + x.toFixed(a !== 0 && a < 0.01 ? 4 : 2);
	}

	function pct(x) {
		return typeof x === 'number' && isFinite(x) ? Math.round(x * 100) + '%' : '-';
	}

	/* a team's month against its budget (gb_engine_budgets) */
	function budgetText(b) {
		if (!b)
			return '-';
		if (b.budget === null)
			return money(b.spent) + ' this month, projected ' + money(b.projected) + ' (no budget)';
		return money(b.spent) + ' of ' + money(b.budget) + ' this month (' + pct(b.spent_fraction) +
			'), projected ' + money(b.projected) + ' (' + pct(b.projected_fraction) + ')' +
			(b.state === 'ok' ? '' : ': ' + b.state);
	}

	function duration(s) {
		if (typeof s !== 'number' || !isFinite(s))
			return '-';
		const neg = s < 0;
		s = Math.abs(Math.round(s));
		const d = Math.floor(s / 86400), hr = Math.floor(s % 86400 / 3600);
		const m = Math.floor(s % 3600 / 60), sec = s % 60;
		const t = d ? d + 'd ' + hr + 'h' : hr ? hr + 'h ' + m + 'm' : m ? m + 'm ' + sec + 's' : sec + 's';
		return neg ? '-' + t : t;
	}

	function nowS() {
		return (Date.now() + skewMs) / 1000;
	}

	/* A time of the API (RFC 3339 with milliseconds, docs/json.md) as unix
	 * seconds; NaN for null or anything else. */
	function secs(t) {
		return typeof t === 'string' ? Date.parse(t) / 1000 : NaN;
	}

	function timeText(t) {
		const d = new Date(t);
		return isNaN(d) ? '-' : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
	}

	/* ----------------------------------------------------------- API */

	class ApiError extends Error {
		constructor(status, code, message) {
			super(message);
			this.status = status;
			this.code = code;
		}
	}

	/* The API's answer as JSON, or throws ApiError with the API's own
	 * message.  signal: an AbortController's (the view went away). */
	async function api(method, path, body, signal, contentType) {
		const token = sessionStorage.getItem(TOKEN_KEY);
		const headers = {Accept: 'application/json'};
		if (token)
			headers.Authorization = 'Bearer ' + token;
		if (body !== undefined)
			headers['Content-Type'] = contentType || 'application/json';
		let res;
		try {
			res = await fetch(path, {
				method, headers, signal, cache: 'no-store',
				credentials: 'omit', redirect: 'error',
				body: body === undefined || contentType ? body : JSON.stringify(body),
			});
		} catch (e) {
			if (e.name === 'AbortError')
				throw e;
			throw new ApiError(0, 'Unreachable',
				'cannot reach the gpubroker daemon at ' + location.origin +
				' (' + e.message + '); is it still running?');
		}
		const date = Date.parse(res.headers.get('Date') || '');
		if (!isNaN(date))
			skewMs = date - Date.now();
		let data = null;
		try {
			data = await res.json();
		} catch (e) {
			data = null;
		}
		if (!res.ok) {
			const err = data && data.error;
			const details = err && Array.isArray(err.details) ? err.details : [];
			throw new ApiError(res.status, err && err.code || 'HTTP' + res.status,
				[err && err.message || 'HTTP ' + res.status + ' from the daemon',
					...details].join('\n'));
		}
		return data;
	}

	/* What a view does with an API error: a token no longer valid signs
	 * out; anything else is shown as the API said it. */
	function failed(e) {
		if (e.name === 'AbortError')
			return;
		if (e.status === 401) {
			signOut(e.message);
			return;
		}
		showError(e.message);
	}

	const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

	/* Follows the events of pool (null: every pool the token sees):
	 * onEvents(list) for each batch, through the API's long poll.  The
	 * whole pool's history first; for every pool, only the last minute
	 * (by the daemon's clock).  Returns {stop()}. */
	function follow(pool, signal, onEvents) {
		let after = 0, full = false, backoff = 1000;
		const since = pool ? null : Math.floor(Date.now() + skewMs - 60000);
		(async () => {
			for (let first = true; !signal.aborted; first = false) {
				const q = new URLSearchParams();
				if (pool)
					q.set('pool', pool);
				if (since !== null)
					q.set('since_ms', String(since));
				q.set('after', String(after));
				if (!first && !full)
					q.set('wait', String(POLL_WAIT_S));
				try {
					const d = await api('GET', '/v1/events?' + q, undefined, signal);
					const evs = d.events || [];
					full = evs.length >= 1000;
					if (evs.length)
						after = evs[evs.length - 1].id;
					backoff = 1000;
					onEvents(evs, first);
				} catch (e) {
					if (signal.aborted || e.name === 'AbortError')
						return;
					failed(e);
					if (e.status === 401)
						return;
					await sleep(backoff);
					backoff = Math.min(backoff * 2, 15000);
				}
			}
		})();
	}

	/* A view's life: an AbortController for its requests, a timer, and
	 * a refresh that never runs twice at once. */
	function viewLife(refresh, everyMs) {
		const ctl = new AbortController();
		let running = false, again = false;
		async function run() {
			if (running) {
				again = true;
				return;
			}
			running = true;
			try {
				do {
					again = false;
					await refresh(ctl.signal);
				} while (again && !ctl.signal.aborted);
			} catch (e) {
				failed(e);
			} finally {
				running = false;
			}
		}
		const timer = setInterval(run, everyMs || REFRESH_MS);
		return {
			signal: ctl.signal,
			refresh: run,
			stop() {
				clearInterval(timer);
				ctl.abort();
			},
		};
	}

	/* ------------------------------------------------------- sign-in */

	function whoText(w) {
		return w.name + ' (' + w.role + (w.team ? ', team ' + w.team : '') + ')';
	}

	function setSignedIn(w) {
		session = w;
		$('who').textContent = w ? 'Signed in as ' + whoText(w) : '';
		$('nav').hidden = !w;
		$('signout').hidden = !w || w.name === 'anonymous';
		$('signin').hidden = !!w;
		$('view').hidden = !w;
	}

	function signOut(why) {
		sessionStorage.removeItem(TOKEN_KEY);
		stopView();
		setSignedIn(null);
		showNotice('');
		showError(why || '');
		if (!why) {
			/* the next person starts from the list */
			history.replaceState(null, '', '#/pools');
			showNotice('Signed out: the token is forgotten in this tab.');
		}
		$('token').value = '';
		$('token').focus();
	}

	async function signIn(ev) {
		ev.preventDefault();
		const input = $('token');
		const token = input.value.trim();
		showError('');
		showNotice('');
		if (!token) {
			showError('Paste an API token first.');
			return;
		}
		sessionStorage.setItem(TOKEN_KEY, token);
		input.value = '';
		try {
			setSignedIn(await api('GET', '/v1/whoami'));
			route();
		} catch (e) {
			sessionStorage.removeItem(TOKEN_KEY);
			showError(e.message);
			input.focus();
		}
	}

	/* ------------------------------------------------------- routing */

	function stopView() {
		if (current)
			current.stop();
		current = null;
	}

	function route() {
		if (!session)
			return;
		stopView();
		showError('');
		showNotice('');
		const hash = location.hash.replace(/^#\/?/, '');
		const [name, ...rest] = hash.split('/');
		let arg = null;
		try {
			arg = rest.length ? decodeURIComponent(rest.join('/')) : null;
		} catch (e) {
			arg = null; /* a malformed address: the list */
		}
		const view = $('view');
		view.replaceChildren();
		/* the views of the nav (functions below, hoisted) */
		const views = {pools: poolsView, cost: costView, offers: offersView,
			plan: planView, nodes: nodesView, audit: auditView};
		const which = name === 'pool' && arg ? null
			: Object.prototype.hasOwnProperty.call(views, name) ? name : 'pools';
		current = which ? views[which](view) : poolView(view, arg);
		for (const a of document.querySelectorAll('#nav a'))
			if (a.dataset.view === which)
				a.setAttribute('aria-current', 'page');
			else
				a.removeAttribute('aria-current');
	}

	/* ---------------------------------------------------- pools view */

	const poolFilter = {team: '', state: ''};

	async function allPools(signal) {
		const out = [];
		let after = null;
		do {
			const q = new URLSearchParams({limit: '1000'});
			if (after)
				q.set('after', after);
			const d = await api('GET', '/v1/pools?' + q, undefined, signal);
			out.push(...(d.pools || []));
			after = d.next_after || null;
		} while (after);
		return out;
	}

	function waitingText(p) {
		const w = p.waiting;
		if (!w)
			return null;
		let t = 'waiting: ' + (w.reason || '');
		if (w.next_attempt_at)
			t += ' (next try in ' + duration(secs(w.next_attempt_at) - nowS()) + ')';
		return h('span', {class: 'reason'}, t);
	}

	function poolsView(root) {
		const teamSel = h('select', {id: 'filter-team'});
		const stateSel = h('select', {id: 'filter-state'});
		const body = h('div', {id: 'pools-body'});
		/* the options change only when the teams or states do (not
		 * under a person choosing one) */
		const fillSelect = (sel, values, chosen, all) => {
			const key = values.join('\n');
			if (sel.dataset.key === key)
				return;
			sel.dataset.key = key;
			sel.replaceChildren(h('option', {value: ''}, all),
				...values.map((v) => h('option', {value: v, selected: v === chosen}, v)));
		};
		let pools = [];
		function render() {
			const teams = [...new Set(pools.map((p) => p.team))].sort();
			const states = [...new Set(pools.map((p) => p.state))].sort();
			if (poolFilter.team && !teams.includes(poolFilter.team))
				teams.push(poolFilter.team);
			if (poolFilter.state && !states.includes(poolFilter.state))
				states.push(poolFilter.state);
			fillSelect(teamSel, teams, poolFilter.team, 'every team');
			fillSelect(stateSel, states, poolFilter.state, 'every state');
			const shown = pools.filter((p) =>
				(!poolFilter.team || p.team === poolFilter.team) &&
				(!poolFilter.state || p.state === poolFilter.state));
			const rows = shown.map((p) => h('tr', {'data-pool': p.name},
				h('td', null, h('a', {href: '#/pool/' + encodeURIComponent(p.name)}, p.name)),
				h('td', null, p.team),
				h('td', null, p.purpose || '-'),
				h('td', {class: 'state-cell'}, stateBadge(p.state), waitingText(p)),
				h('td', {class: 'num'}, p.desired + ' / ' + p.running),
				h('td', null, (p.clouds || []).join(', ') || '-'),
				h('td', {class: 'num'}, money(p.price_per_hour)),
				h('td', {class: 'num'}, p.ttl_left_s === null ? '-' : duration(p.ttl_left_s)),
				h('td', {class: 'num'}, duration(p.age_s))));
			keepFocus(body, () => body.replaceChildren(table('pools', [
				{title: 'Pool'}, {title: 'Team'}, {title: 'Purpose'},
				{title: 'State'}, {title: 'Desired / running', num: true},
				{title: 'Clouds'}, {title: '$/h', num: true},
				{title: 'TTL left', num: true}, {title: 'Age', num: true},
			], rows, pools.length
				? 'No pool matches these filters.'
				: 'Nothing here yet: no pools. Create one with gpubroker apply -f pool.yaml.')));
		}
		teamSel.addEventListener('change', () => {
			poolFilter.team = teamSel.value;
			render();
		});
		stateSel.addEventListener('change', () => {
			poolFilter.state = stateSel.value;
			render();
		});
		root.append(h('h1', null, 'Pools'),
			h('div', {class: 'filters'},
				h('div', null, h('label', {for: 'filter-team'}, 'Team'), teamSel),
				h('div', null, h('label', {for: 'filter-state'}, 'State'), stateSel)),
			body);
		const life = viewLife(async (signal) => {
			pools = await allPools(signal);
			render();
		});
		life.refresh();
		follow(null, life.signal, (evs) => {
			if (evs.length)
				life.refresh();
		});
		return life;
	}

	/* ------------------------------------------------------ pool view */

	/* Asks to confirm, in a modal dialog that names what it does;
	 * typed: the text the person must type first (or null).  Resolves
	 * true when confirmed. */
	function confirmDialog(text, okText, typed) {
		const dlg = $('confirm'), input = $('confirm-typed'), ok = $('confirm-ok');
		$('confirm-text').textContent = text;
		ok.textContent = okText;
		$('confirm-typed-wrap').hidden = !typed;
		input.value = '';
		if (typed)
			$('confirm-typed-label').textContent = 'Type ' + typed + ' to confirm';
		ok.disabled = !!typed;
		input.oninput = () => {
			ok.disabled = input.value !== typed;
		};
		return new Promise((resolve) => {
			dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), {once: true});
			dlg.returnValue = '';
			dlg.showModal();
			(typed ? input : $('confirm-cancel')).focus();
		});
	}

	/* min/max, target, mean utilisation, next action (status's line) */
	function autoscaleText(p) {
		const a = p.autoscale;
		const t = [];
		if (a.min !== undefined)
			t.push('min ' + a.min + ', max ' + a.max);
		t.push('target ' + pct(a.target) + ', mean ' + (typeof a.mean === 'number' ? pct(a.mean) : '-') +
			' (' + (a.reporting || 0) + ' reporting), floor ' + (a.floor || '-'));
		t.push('next: ' + (a.next || '-') + (a.next_at ? ' at ' + a.next_at : ''));
		t.push('now: ' + (a.reason || '-'));
		t.push('last change: ' + (a.last ? a.last + (a.last_at ? ' at ' + a.last_at : '') : 'none yet'));
		return t.join('; ');
	}

	function poolView(root, name) {
		const facts = h('dl', {class: 'facts', id: 'pool-facts'});
		const title = h('h1', null, 'Pool ', h('span', {id: 'pool-name'}, name), ' ',
			h('span', {id: 'pool-state'}));
		const insts = h('div', {id: 'instances-body'});
		const events = h('ol', {class: 'events', id: 'events'});
		const eventsEmpty = h('p', {class: 'empty', id: 'events-empty'}, 'Nothing here yet: no events.');
		const count = h('input', {id: 'scale-count', type: 'number', min: 0, step: 1, required: true});
		let pool = null;
		const fact = (label, value) => h('div', null, h('dt', null, label), h('dd', null, value));
		function render() {
			const p = pool;
			$('pool-state').replaceChildren(stateBadge(p.state));
			facts.replaceChildren(
				fact('Team', p.team), fact('Purpose', p.purpose || '-'),
				fact('Desired / running', p.desired + ' / ' + p.running),
				fact('Pending', p.pending), fact('Clouds', (p.clouds || []).join(', ') || '-'),
				fact('$/h', money(p.price_per_hour)),
				fact('TTL left', p.ttl_left_s === null ? '-' : duration(p.ttl_left_s)),
				fact('Age', duration(p.age_s)),
				p.team_budget ? fact('Team budget', h('span', {id: 'pool-budget'}, budgetText(p.team_budget))) : '',
				p.autoscale ? fact('Autoscale', h('span', {id: 'pool-autoscale'}, autoscaleText(p))) : '',
				p.waiting ? fact('Waiting', waitingText(p)) : '',
				p.reason ? fact('Reason', p.reason) : '',
				// a CI job's pool: ci-repository, ci-ref, ci-run among them
				Object.keys(p.labels || {}).length
					? fact('Labels', Object.keys(p.labels).sort()
						.map((k) => k + '=' + p.labels[k]).join(', '))
					: '');
			if (document.activeElement !== count && count.value === '')
				count.value = p.desired;
			const now = nowS();
			const rows = (p.instances || []).map((i) => h('tr', {'data-instance': i.id || i.name},
				h('td', null, i.name), h('td', null, i.cloud),
				h('td', null, i.region + (i.zone ? ' / ' + i.zone : '')),
				h('td', null, i.instance_type),
				h('td', null, i.capacity), h('td', null, stateBadge(i.state)),
				h('td', null, [i.public_ip, i.private_ip].filter(Boolean).join(' / ') || '-'),
				h('td', {class: 'num'}, money(i.price_per_hour)),
				h('td', {class: 'num'}, i.launched_at ? duration(now - secs(i.launched_at)) : '-')));
			insts.replaceChildren(table('instances', [
				{title: 'Instance'}, {title: 'Cloud'}, {title: 'Region / zone'},
				{title: 'Type'}, {title: 'Capacity'}, {title: 'State'},
				{title: 'Addresses'}, {title: '$/h', num: true}, {title: 'Age', num: true},
			], rows, 'Nothing here yet: this pool has no instances.'));
		}
		async function act(what, fn) {
			showError('');
			showNotice('');
			try {
				await fn();
				showNotice(what);
				life.refresh();
			} catch (e) {
				failed(e);
			}
		}
		const scaleForm = h('form', {id: 'scale-form', onsubmit: async (ev) => {
			ev.preventDefault();
			const n = Number(count.value);
			if (!Number.isInteger(n) || n < 0) {
				showError('Scale to a whole number of instances, 0 or more.');
				return;
			}
			const from = pool ? pool.desired : '?';
			if (!await confirmDialog('Scale pool ' + name + ' from ' + from + ' to ' + n +
				' instance' + (n === 1 ? '' : 's') + '?', 'Scale ' + name))
				return;
			act('Scale of pool ' + name + ' to ' + n + ' accepted.', () =>
				api('POST', '/v1/pools/' + encodeURIComponent(name) + '/scale', {count: n}));
		}},
		h('div', {class: 'field'}, h('label', {for: 'scale-count'}, 'Instances'), ' ', count),
		h('button', {type: 'submit', class: 'primary', id: 'scale-button'}, 'Scale…'));
		const destroyBtn = h('button', {type: 'button', class: 'danger', id: 'destroy-button',
			onclick: async () => {
				const n = pool ? (pool.instances || []).length : 0;
				if (!await confirmDialog('Destroy pool ' + name + ' and terminate its ' + n +
					' instance' + (n === 1 ? '' : 's') + '? This cannot be undone.',
				'Destroy ' + name, name))
					return;
				act('Destroy of pool ' + name + ' accepted.', () =>
					api('DELETE', '/v1/pools/' + encodeURIComponent(name)));
			}}, 'Destroy…');
		const decision = h('div', {id: 'decision-body'});
		const specBody = h('div', {id: 'spec-body'});
		root.append(
			h('p', null, h('a', {href: '#/pools'}, '← All pools')),
			title, facts,
			h('h2', null, 'Actions'),
			h('div', {class: 'actions'}, scaleForm, destroyBtn),
			h('h2', null, 'Instances'), insts,
			h('h2', null, 'Events'), eventsEmpty, events,
			h('details', {class: 'decision', id: 'spec'},
				h('summary', null, 'Spec (as last applied)'), specBody),
			h('details', {class: 'decision', id: 'decision'},
				h('summary', null, 'Placement decision (the plan of its last apply)'), decision));
		/* the spec and the decision change only when the pool is
		 * applied again */
		async function loadDecision(signal) {
			try {
				const d = await api('GET', '/v1/pools/' + encodeURIComponent(name) + '/spec', undefined, signal);
				specBody.replaceChildren(h('pre', {class: 'spec', id: 'pool-spec'},
					JSON.stringify(d.spec, null, 2)));
			} catch (e) {
				failed(e);
			}
			try {
				const d = await api('GET', '/v1/pools/' + encodeURIComponent(name) + '/plan', undefined, signal);
				decision.replaceChildren(h('p', {class: 'muted'}, 'Planned ' + timeText(d.time) + '.'),
					...planReport(d.plan, 'decision'));
			} catch (e) {
				if (e.status === 404)
					decision.replaceChildren(h('p', {class: 'empty'}, 'Nothing here yet: ' + e.message + '.'));
				else
					failed(e);
			}
		}
		const life = viewLife(async (signal) => {
			// all=1: a pool destroyed while its page is open shows as
			// destroyed (its history), not as gone
			pool = await api('GET', '/v1/pools/' + encodeURIComponent(name) + '?all=1', undefined, signal);
			render();
		});
		life.refresh();
		follow(name, life.signal, (evs, first) => {
			if (first || evs.some((e) => e.kind === 'applied'))
				loadDecision(life.signal);
			for (const e of evs)
				events.prepend(h('li', {'data-kind': e.kind},
					h('time', {datetime: e.time || ''}, timeText(e.time)),
					h('span', {class: 'kind'}, e.kind),
					h('span', {class: 'message'}, (e.instance ? e.instance + ': ' : '') + e.message)));
			while (events.children.length > MAX_EVENTS_SHOWN)
				events.lastChild.remove();
			eventsEmpty.hidden = events.children.length > 0;
			events.hidden = !eventsEmpty.hidden;
			if (evs.length && !first)
				life.refresh();
		});
		return life;
	}

	/* ----------------------------------------------------- cost view */

	function costChart(groups) {
		const w = 640, row = 26, left = 170, right = 80;
		const max = Math.max(...groups.map((g) => g.cost), 0) || 1;
		const s = svg('svg', {class: 'chart', viewBox: '0 0 ' + w + ' ' + (groups.length * row + 8),
			role: 'img', 'aria-label': 'Cost by group, as bars'});
		groups.forEach((g, i) => {
			const y = 4 + i * row;
			const bw = Math.max(1, (w - left - right) * g.cost / max);
			s.append(svg('text', {x: left - 8, y: y + 16, 'text-anchor': 'end'}, g.key),
				svg('rect', {x: left, y: y + 3, width: bw.toFixed(1), height: row - 8, rx: 2}),
				svg('text', {x: left + bw + 6, y: y + 16}, money(g.cost)));
		});
		return s;
	}

	const COST_BUCKETS = 12;
	const COST_REFRESH_MS = 30000;

	/* The period's cost in COST_BUCKETS slices of time, from the API's
	 * cost since each slice's start: cost since t counts only what
	 * instances cost after t, so the slice [t_i, t_i+1) cost C(t_i) -
	 * C(t_i+1), and the last slice is all of C(t_last) (it ends now).
	 * Returns {sums: [the API's answer for each t_i], starts: [t_i]}. */
	async function costSeries(by, span, signal) {
		const end = Math.floor(nowS()), step = span / COST_BUCKETS;
		const starts = [...Array(COST_BUCKETS).keys()].map((i) => Math.floor(end - span + i * step));
		const sums = await Promise.all(starts.map((t) => api('GET', '/v1/cost?' +
			new URLSearchParams({by, since: String(t)}), undefined, signal)));
		return {sums, starts};
	}

	const groupCost = (c, key) => ((c.groups || []).find((g) => g.key === key) || {cost: 0}).cost;

	/* A stacked bar per slice of time, a colour per group (CSS classes
	 * s0..s7), with a legend. */
	function costTimeChart(series, keys, span) {
		const w = 640, ht = 180, top = 14, bottom = 22, left = 8;
		const bw = (w - left) / COST_BUCKETS;
		const slices = series.sums.map((c, i) => keys.map((k) =>
			groupCost(c, k) - (i + 1 < COST_BUCKETS ? groupCost(series.sums[i + 1], k) : 0)));
		const max = Math.max(...slices.map((v) => v.reduce((a, b) => a + Math.max(0, b), 0)), 0) || 1;
		const s = svg('svg', {class: 'chart', id: 'cost-time', viewBox: '0 0 ' + w + ' ' + (ht + top + bottom),
			role: 'img', 'aria-label': 'Cost over time, by ' + keys.join(', ')});
		const label = (t) => {
			const d = new Date((t - skewMs / 1000) * 1000);
			return span <= 86400 ? d.toTimeString().slice(0, 5) : d.toISOString().slice(5, 10);
		};
		slices.forEach((vals, i) => {
			let y = top + ht;
			vals.forEach((v, k) => {
				const hgt = Math.max(0, v) / max * ht;
				y -= hgt;
				s.append(svg('rect', {x: (left + i * bw + 2).toFixed(1), y: y.toFixed(1),
					width: (bw - 4).toFixed(1), height: hgt.toFixed(1),
					class: 's' + k % 8, 'data-key': keys[k], 'data-cost': String(v)},
				undefined));
			});
			if (i % 3 === 0)
				s.append(svg('text', {x: (left + i * bw + 2).toFixed(1), y: top + ht + 16},
					label(series.starts[i])));
		});
		s.append(svg('text', {x: w - 4, y: 11, 'text-anchor': 'end'}, 'highest slice ' + money(max)));
		const legend = h('ul', {class: 'legend'}, keys.map((k, i) =>
			h('li', null, h('span', {class: 'swatch s' + i % 8}), k)));
		return h('div', null, s, legend);
	}

	function costView(root) {
		const by = h('select', {id: 'cost-by'},
			['team', 'pool', 'cloud', 'label'].map((v) => h('option', {value: v}, v)));
		const labelKey = h('input', {id: 'cost-label', placeholder: 'a label key', spellcheck: 'false'});
		const labelField = h('div', {hidden: true}, h('label', {for: 'cost-label'}, 'Label key'), labelKey);
		const period = h('select', {id: 'cost-period'},
			[['0', 'all time'], ['3600', 'last hour'], ['86400', 'last 24 hours'],
				['604800', 'last 7 days'], ['2592000', 'last 30 days']]
				.map(([v, t]) => h('option', {value: v}, t)));
		const body = h('div', {id: 'cost-body'});
		root.append(h('h1', null, 'Cost'),
			h('p', {class: 'muted'}, 'The same numbers as gpubroker cost: each instance from its create to its end, at its launch price. Choose a period to see it over time.'),
			h('div', {class: 'filters'},
				h('div', null, h('label', {for: 'cost-by'}, 'By'), by), labelField,
				h('div', null, h('label', {for: 'cost-period'}, 'Period'), period)),
			body);
		const life = viewLife(async (signal) => {
			labelField.hidden = by.value !== 'label';
			if (by.value === 'label' && !labelKey.value.trim()) {
				body.replaceChildren(h('p', {class: 'empty'}, 'Name a label key (a key of the pools\' labels) to group by.'));
				return;
			}
			const byParam = by.value === 'label' ? 'label:' + labelKey.value.trim() : by.value;
			const span = Number(period.value);
			const series = span ? await costSeries(byParam, span, signal) : null;
			const c = series ? series.sums[0]
				: await api('GET', '/v1/cost?' + new URLSearchParams({by: byParam}), undefined, signal);
			const groups = (c.groups || []).slice().sort((a, b) => b.cost - a.cost);
			const rows = groups.map((g) => h('tr', {'data-key': g.key},
				h('td', null, g.key), h('td', {class: 'num'}, money(g.cost)),
				h('td', {class: 'num'}, (g.hours || 0).toFixed(2)),
				h('td', {class: 'num'}, g.instances)));
			const foot = h('tr', null, h('td', null, 'Total'),
				h('td', {class: 'num', id: 'cost-total'}, money(c.total)), h('td'), h('td'));
			const budgets = (c.budgets || []).map((b) => h('tr', {'data-team': b.team},
				h('td', null, b.team), h('td', {class: 'num'}, money(b.spent)),
				h('td', {class: 'num'}, money(b.per_hour)), h('td', {class: 'num'}, money(b.projected)),
				h('td', {class: 'num'}, b.budget === null ? '-' : money(b.budget)),
				h('td', {class: 'num'}, pct(b.spent_fraction)), h('td', null, b.state)));
			body.replaceChildren(
				budgets.length ? h('div', {id: 'budgets-body'}, h('h2', null, 'This month against the budget'),
					table('budgets', [{title: 'Team'}, {title: 'Spent this month', num: true},
						{title: '$/h now', num: true}, {title: 'Projected to month end', num: true},
						{title: 'Budget', num: true}, {title: 'Used', num: true}, {title: 'State'}],
					budgets, 'No team has a budget.')) : '',
				groups.length ? (series ? costTimeChart(series, groups.map((g) => g.key), span) : costChart(groups)) : '',
				table('cost', [{title: by.value}, {title: 'Cost (' + (c.currency || 'USD') + ')', num: true},
					{title: 'Instance-hours', num: true}, {title: 'Instances', num: true}],
				rows, 'Nothing here yet: no instance has cost anything in this period.', foot));
		}, COST_REFRESH_MS);
		by.addEventListener('change', life.refresh);
		labelKey.addEventListener('change', life.refresh);
		period.addEventListener('change', life.refresh);
		life.refresh();
		return life;
	}

	/* --------------------------------------------------- offers view */

	function offersView(root) {
		const field = (id, label, el) => h('div', null, h('label', {for: id}, label), el);
		const gpu = h('input', {id: 'offers-gpu', placeholder: 'H100, A10G…', spellcheck: 'false'});
		const cloud = h('input', {id: 'offers-cloud', placeholder: 'aws, gcp…', spellcheck: 'false'});
		const region = h('input', {id: 'offers-region', placeholder: 'eu-* (a glob)', spellcheck: 'false'});
		const capacity = h('select', {id: 'offers-capacity'},
			[['', 'any'], ['on-demand', 'on-demand'], ['spot', 'spot'], ['reserved', 'reserved']]
				.map(([v, t]) => h('option', {value: v}, t)));
		const body = h('div', {id: 'offers-body'},
			h('p', {class: 'empty'}, 'Nothing here yet: choose filters and press Show offers.'));
		const ctl = new AbortController();
		const form = h('form', {class: 'filters', id: 'offers-form', onsubmit: async (ev) => {
			ev.preventDefault();
			showError('');
			const q = new URLSearchParams();
			for (const [k, el] of [['gpu', gpu], ['cloud', cloud], ['region', region], ['capacity', capacity]])
				if (el.value.trim())
					q.set(k, el.value.trim());
			try {
				const d = await api('GET', '/v1/offers?' + q, undefined, ctl.signal);
				const now = nowS();
				const offers = (d.offers || []).map((o) => Object.assign({
					per_gpu: o.price_per_hour / (o.gpu_count || 1)}, o))
					.sort((a, b) => a.per_gpu - b.per_gpu);
				const rows = offers.slice(0, MAX_OFFERS_SHOWN).map((o) => h('tr', null,
					h('td', null, o.cloud), h('td', null, o.region + (o.zone ? ' / ' + o.zone : '')),
					h('td', null, o.instance_type), h('td', null, o.gpu_count + ' × ' + o.gpu),
					h('td', null, o.capacity), h('td', {class: 'num'}, money(o.price_per_hour)),
					h('td', {class: 'num'}, money(o.per_gpu)),
					h('td', {class: 'num'}, o.fetched_at ? duration(now - secs(o.fetched_at)) : '-')));
				body.replaceChildren(
					offers.length > MAX_OFFERS_SHOWN || d.truncated
						? h('p', {class: 'muted'}, 'The ' + MAX_OFFERS_SHOWN + ' cheapest per GPU-hour of ' +
							offers.length + (d.truncated ? '+' : '') + ' offers; narrow the filters to see others.')
						: '',
					table('offers', [{title: 'Cloud'}, {title: 'Region / zone'}, {title: 'Type'},
						{title: 'GPUs'}, {title: 'Capacity'}, {title: '$/h', num: true},
						{title: '$/GPU-h', num: true}, {title: 'Price age', num: true}],
					rows, 'Nothing here yet: no offer matches these filters.'));
			} catch (e) {
				failed(e);
			}
		}},
		field('offers-gpu', 'GPU model', gpu), field('offers-cloud', 'Cloud', cloud),
		field('offers-region', 'Region', region), field('offers-capacity', 'Capacity', capacity),
		h('div', null, h('button', {type: 'submit', class: 'primary'}, 'Show offers')));
		root.append(h('h1', null, 'Offers'), form, body);
		return {stop: () => ctl.abort()};
	}

	/* ----------------------------------------------------- plan view */

	const REFUSALS_SHOWN = 200;

	/* One plan of POST /v1/plan?explain=1: the ranked candidates, and
	 * every other offer with the rule that refused it. */
	function planReport(p, i) {
		const out = [h('h2', null, 'Pool ' + p.pool + ': ' + p.candidate_count + ' candidate' +
			(p.candidate_count === 1 ? '' : 's') + ' of ' + p.offers_considered + ' offers')];
		if (p.no_candidate)
			out.push(h('p', {class: 'error', id: 'plan-none-' + i}, p.no_candidate));
		const place = (o) => o.region + (o.zone ? ' / ' + o.zone : '');
		out.push(table('plan-candidates-' + i, [{title: 'Rank', num: true}, {title: 'Cloud'},
			{title: 'Region / zone'}, {title: 'Type'}, {title: 'GPUs'}, {title: 'Capacity'},
			{title: '$/h each', num: true}, {title: 'Pool $/h', num: true}, {title: 'Score', num: true}],
		(p.candidates || []).map((c) => h('tr', null,
			h('td', {class: 'num'}, c.rank), h('td', null, c.cloud), h('td', null, place(c)),
			h('td', null, c.instance_type), h('td', null, c.gpu_count + ' × ' + c.gpu_model),
			h('td', null, c.capacity), h('td', {class: 'num'}, money(c.price_per_hour)),
			h('td', {class: 'num'}, money(c.pool_price_per_hour)),
			h('td', {class: 'num'}, typeof c.score === 'number' ? c.score.toFixed(3) : '-'))),
		'No offer qualifies.'));
		const refusals = p.refusals || [];
		const rules = Object.entries(p.refused || {}).sort((a, b) => b[1] - a[1]);
		if (!Array.isArray(p.refusals)) {
			/* a stored decision keeps how many each rule refused */
			out.push(h('h2', null, 'Refused offers'), table('plan-refused-' + i,
				[{title: 'Refused by'}, {title: 'Offers', num: true}],
				rules.map(([r, n]) => h('tr', {'data-rule': r}, h('td', null, r),
					h('td', {class: 'num'}, n))),
				'Nothing here yet: no offer was refused.'));
			return out;
		}
		if (p.refusals_per_rule)
			out.push(h('p', {class: 'muted', id: 'plan-sample-' + i}, 'As recorded at the apply: the first ' +
				p.refusals_per_rule + ' offers each rule refused, with why (the counts are of all of them).'));
		const rule = h('select', {id: 'plan-rule-' + i}, h('option', {value: ''}, 'every rule'),
			...rules.map(([r, n]) => h('option', {value: r}, r + ' (' + n + ')')));
		const body = h('div', {id: 'plan-refusals-body-' + i});
		const render = () => {
			const shown = refusals.filter((o) => !rule.value || o.rule === rule.value);
			body.replaceChildren(shown.length > REFUSALS_SHOWN
				? h('p', {class: 'muted'}, 'The first ' + REFUSALS_SHOWN + ' of ' + shown.length + '.') : '',
			table('plan-refusals-' + i, [{title: 'Cloud'}, {title: 'Region / zone'}, {title: 'Type'},
				{title: 'GPUs'}, {title: 'Capacity'}, {title: '$/h', num: true},
				{title: 'Refused by'}, {title: 'Why'}],
			shown.slice(0, REFUSALS_SHOWN).map((o) => h('tr', {'data-rule': o.rule},
				h('td', null, o.cloud), h('td', null, place(o)), h('td', null, o.instance_type),
				h('td', null, o.gpu_count + ' × ' + o.gpu_model), h('td', null, o.capacity),
				h('td', {class: 'num'}, money(o.price_per_hour)), h('td', null, o.rule),
				h('td', {class: 'wrap'}, o.reason))),
			'Nothing here yet: no offer was refused.'));
		};
		rule.addEventListener('change', render);
		render();
		out.push(h('h2', null, 'Refused offers'),
			h('div', {class: 'filters'}, h('div', null, h('label', {for: 'plan-rule-' + i}, 'Rule'), rule)),
			body);
		return out;
	}

	function planView(root) {
		const spec = h('textarea', {id: 'plan-spec', rows: 14, spellcheck: 'false',
			placeholder: 'pool:\n  name: my-pool\n  team: research\n  count: 2\n  gpu: {model: A100-80GB}'});
		const file = h('input', {id: 'plan-file', type: 'file', accept: '.yaml,.yml,.json'});
		const body = h('div', {id: 'plan-body'},
			h('p', {class: 'empty'}, 'Nothing here yet: paste or upload a pool spec and press Plan.'));
		const ctl = new AbortController();
		file.addEventListener('change', async () => {
			if (file.files.length)
				spec.value = await file.files[0].text();
		});
		const form = h('form', {id: 'plan-form', onsubmit: async (ev) => {
			ev.preventDefault();
			showError('');
			if (!spec.value.trim()) {
				showError('Paste a pool spec (YAML, as for gpubroker plan -f) first.');
				return;
			}
			try {
				const d = await api('POST', '/v1/plan?explain=1&limit=20', spec.value, ctl.signal,
					'application/yaml');
				body.replaceChildren(...(d.plans || []).flatMap(planReport));
			} catch (e) {
				failed(e);
			}
		}},
		h('p', {class: 'muted'}, 'What gpubroker plan --explain shows, from this daemon\'s catalog and policies: the ranked candidates and why every other offer was refused. Nothing is created.'),
		h('div', {class: 'field'}, h('label', {for: 'plan-spec'}, 'Pool spec (YAML)'), spec),
		h('div', {class: 'filters'},
			h('div', null, h('label', {for: 'plan-file'}, 'or a file'), file),
			h('div', null, h('button', {type: 'submit', class: 'primary'}, 'Plan'))));
		root.append(h('h1', null, 'Plan preview'), form, body);
		return {stop: () => ctl.abort()};
	}

	/* ---------------------------------------------------- nodes view */

	const num = (x, digits) => typeof x === 'number' ? x.toFixed(digits) : '-';

	function nodesView(root) {
		const body = h('div', {id: 'nodes-body'});
		root.append(h('h1', null, 'On-prem nodes'),
			h('p', {class: 'muted'}, 'The on-prem inventory: health and figures from the last probe (gpubroker nodes probe), and the pool holding each node.'),
			body);
		const life = viewLife(async (signal) => {
			const d = await api('GET', '/v1/nodes', undefined, signal);
			const now = nowS();
			const rows = (d.nodes || []).map((n) => {
				const hl = n.health, f = n.figures || {};
				const health = hl ? (hl.state || '?') + (hl.stale ? ' (stale)' : '') : 'unprobed';
				const probed = hl && typeof hl.age_s === 'number' ? duration(hl.age_s) + ' ago'
					: hl && hl.probed_at ? duration(now - secs(hl.probed_at)) + ' ago' : 'never';
				return h('tr', {'data-node': n.name},
					h('td', null, n.name), h('td', null, n.site || '-'), h('td', null, n.shape || '-'),
					h('td', null, n.gpus + ' × ' + (n.gpu_model || '?')),
					h('td', null, stateBadge(n.status),
						n.reason && n.status !== 'free' ? h('span', {class: 'reason'}, n.reason) : ''),
					h('td', null, health),
					h('td', {class: 'num'}, num(f.d2d_gbps, 1)),
					h('td', {class: 'num'}, num(f.fp32_tflops, 1)),
					h('td', {class: 'num'}, num(f.bf16_tflops, 1)),
					h('td', null, n.lease && n.lease.pool ? n.lease.pool : '-'),
					h('td', null, probed));
			});
			body.replaceChildren(table('nodes', [
				{title: 'Node'}, {title: 'Site'}, {title: 'Shape'}, {title: 'GPUs'},
				{title: 'Status'}, {title: 'Health'}, {title: 'D2D GB/s', num: true},
				{title: 'FP32 TFLOP/s', num: true}, {title: 'BF16 TFLOP/s', num: true},
				{title: 'Lease'}, {title: 'Probed'},
			], rows, 'Nothing here yet: no on-prem nodes in this broker\'s inventory.'));
		});
		life.refresh();
		return life;
	}

	/* ---------------------------------------------------- audit view */

	const AUDIT_SHOWN = 500;

	function auditView(root) {
		const body = h('div', {id: 'audit-body'});
		root.append(h('h1', null, 'Audit log'),
			h('p', {class: 'muted'}, 'Every change asked of the API, refused ones too; newest first. For admin tokens (the API says so to others).'),
			body);
		const life = viewLife(async (signal) => {
			let rows = [], after = 0;
			for (;;) {
				const d = await api('GET', '/v1/audit?after=' + after, undefined, signal);
				const page = d.audit || [];
				rows = rows.concat(page).slice(-AUDIT_SHOWN);
				if (page.length < 1000)
					break;
				after = page[page.length - 1].id;
			}
			body.replaceChildren(table('audit', [
				{title: 'Time'}, {title: 'Actor'}, {title: 'Role'}, {title: 'Team'},
				{title: 'Action'}, {title: 'Target'}, {title: 'Result'}, {title: 'Detail'},
			], rows.reverse().map((a) => h('tr', {'data-action': a.action, 'data-result': a.result},
				h('td', null, (a.time || '').replace('T', ' ')), h('td', null, a.actor),
				h('td', null, a.role), h('td', null, a.team || '-'), h('td', null, a.action),
				h('td', null, a.target || '-'), h('td', null, a.result),
				h('td', {class: 'wrap'}, a.detail || ''))),
			'Nothing here yet: no change was asked of this broker.'));
		});
		life.refresh();
		return life;
	}

	/* ---------------------------------------------------------- start */

	async function start() {
		$('signin-form').addEventListener('submit', signIn);
		$('signout').addEventListener('click', () => signOut());
		window.addEventListener('hashchange', route);
		/* a daemon without tokens (loopback only) lets anyone in; with
		 * tokens, a token kept in this tab signs in again on reload */
		try {
			setSignedIn(await api('GET', '/v1/whoami'));
			route();
			return;
		} catch (e) {
			if (e.status !== 401)
				showError(e.message);
			else if (sessionStorage.getItem(TOKEN_KEY))
				showError(e.message);
			sessionStorage.removeItem(TOKEN_KEY);
		}
		setSignedIn(null);
		$('token').focus();
	}

	document.addEventListener('DOMContentLoaded', start);
}());
