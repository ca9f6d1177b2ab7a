// Drives a page of mf_print --html in headless Chromium through the DevTools protocol (over
// --remote-debugging-pipe: no network port, no npm package) and prints what it saw, one
// "name=value" line each, for tests/preload/t_html.sh to judge. Usage:
//   node html_check.js CHROMIUM PAGE.html SCREENSHOT.png [FRAME [PROCESS [MODE [WINDOWS]]]]
// FRAME: a frame to click (zoom) and search for; PROCESS: the pid of a process to filter on
// ("": none); MODE: frames "function" (default) or "line" (each call line a frame of its own);
// WINDOWS: "A:B ..." windows to choose on the timeline chart by clicking its marks (0: the
// start, -1: the end; "A~B": by dragging from one to the other), each seen as
// window_A_B=CALLS|BYTES|summary; the screenshot is then taken with the last one shown.
// Exit 0 when the page could be driven (whatever it showed), 1 otherwise.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const [chromium, page, shot, frame = "main", proc = "", mode = "function", windows = ""] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "mf_chromium."));
const browser = spawn(chromium, ["--headless=new", "--no-sandbox", "--disable-gpu",
	"--no-first-run", "--no-default-browser-check", "--disable-extensions",
	"--remote-debugging-pipe", "--user-data-dir=" + profile, "--window-size=1280,900",
	"about:blank"], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let stderr = "";
browser.stdio[2].on("data", (d) => { stderr += d; });
const out = (k, v) => console.log(k + "=" + (typeof v === "string" ? v : JSON.stringify(v)));

let nextId = 1, buffer = "";
const waiting = new Map(), listeners = [];
browser.stdio[4].on("data", (chunk) => {
	buffer += chunk.toString("utf8");
	let end;
	while ((end = buffer.indexOf("\0")) >= 0) {
		const msg = JSON.parse(buffer.slice(0, end));
		buffer = buffer.slice(end + 1);
		if (msg.id && waiting.has(msg.id)) {
			const { resolve, reject } = waiting.get(msg.id);
			waiting.delete(msg.id);
			if (msg.error) reject(new Error(JSON.stringify(msg.error))); else resolve(msg.result);
		} else if (msg.method) {
			for (const l of listeners) l(msg);
		}
	}
});
function send(method, params = {}, sessionId) {
	const id = nextId++;
	const msg = { id, method, params };
	if (sessionId) msg.sessionId = sessionId;
	browser.stdio[3].write(JSON.stringify(msg) + "\0");
	return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
	const { targetId } = await send("Target.createTarget", { url: "about:blank" });
	const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
	const s = (m, p) => send(m, p, sessionId);
	const errors = [];
	let loaded = false;
	listeners.push((msg) => {
		if (msg.sessionId !== sessionId) return;
		if (msg.method === "Runtime.exceptionThrown")
			errors.push(msg.params.exceptionDetails.exception
				? msg.params.exceptionDetails.exception.description : msg.params.exceptionDetails.text);
		if (msg.method === "Runtime.consoleAPICalled" && (msg.params.type === "error" || msg.params.type === "assert"))
			errors.push(msg.params.args.map((a) => a.value || a.description).join(" "));
		if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error")
			errors.push(msg.params.entry.text + " " + (msg.params.entry.url || ""));
		if (msg.method === "Page.loadEventFired") loaded = true;
	});
	await s("Runtime.enable");
	await s("Log.enable");
	await s("Page.enable");
	await s("Emulation.setDeviceMetricsOverride", { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });
	// (requests the page makes: there must be none but the page itself)
	await s("Network.enable");
	const requests = [];
	listeners.push((msg) => { if (msg.sessionId === sessionId && msg.method === "Network.requestWillBeSent") requests.push(msg.params.request.url); });
	const eval_ = async (expr) => {
		const r = await s("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
		if (r.exceptionDetails) throw new Error(expr + ": " + JSON.stringify(r.exceptionDetails));
		return r.result.value;
	};
	const url = "file://" + path.resolve(page);
	const start = Date.now();
	await s("Page.navigate", { url });
	for (let i = 0; i < 600 && !(loaded && await eval_("!!(window.mf && window.mf.ready)")); i++) await sleep(50);
	out("ready", await eval_("!!(window.mf && window.mf.ready)"));
	out("load_ms", Date.now() - start);
	out("script_ms", Math.round(await eval_("window.mf ? window.mf.loadMs : -1")));
	if (mode !== "function") {
		const t = Date.now();
		await eval_("(() => { const e = document.getElementById('mode'); e.value = " + JSON.stringify(mode) +
			"; e.dispatchEvent(new Event('change')); })()");
		out("mode_ms", Date.now() - t);
	}
	out("total", await eval_("window.mf.total()"));
	out("drawn", await eval_("window.mf.drawn()"));
	// the timeline chart: what it drew (null: none)
	out("chart", await eval_("window.mf.chart()"));
	// its call-rate bars: a bar's span, each bar's calls per second, the time axis' labels
	out("bars", await eval_("window.mf.bars ? window.mf.bars() : null"));
	out("chart_note", await eval_("document.getElementById('chart-note').textContent"));
	async function click(x, y) {
		for (const type of ["mouseMoved", "mousePressed", "mouseReleased"])
			await s("Input.dispatchMouseEvent", { type, x, y, button: "left", clickCount: 1 });
	};
	// windows chosen on the chart, as a user does: a click on one mark, then on the other
	if (windows) {
		out("marks", await eval_("window.mf.marks().map((m) => m[0])"));
		out("stacked", await eval_("window.mf.stacked()"));
		for (const w of windows.split(" ")) {
			const drag = w.indexOf("~") > 0, [a, b] = w.split(drag ? "~" : ":").map(Number);
			const marks = await eval_("window.mf.marks()");
			const at = (n) => marks.find((m) => m[0] === n);
			if (!at(a) || !at(b)) { out("window_" + a + "_" + b, "no such mark"); continue; }
			if (drag) {
				await s("Input.dispatchMouseEvent", { type: "mouseMoved", x: at(a)[1], y: at(a)[2] });
				await s("Input.dispatchMouseEvent", { type: "mousePressed", x: at(a)[1], y: at(a)[2], button: "left", clickCount: 1 });
				await s("Input.dispatchMouseEvent", { type: "mouseMoved", x: at(b)[1], y: at(b)[2], button: "left" });
				await s("Input.dispatchMouseEvent", { type: "mouseReleased", x: at(b)[1], y: at(b)[2], button: "left", clickCount: 1 });
			} else {
				await click(at(a)[1], at(a)[2]);
				await click(at(b)[1], at(b)[2]);
			}
			const calls = await eval_("window.mf.total()");
			await eval_("(() => { const e = document.getElementById('metric'); e.value = '1'; e.dispatchEvent(new Event('change')); })()");
			const bytes = await eval_("window.mf.total()");
			await eval_("(() => { const e = document.getElementById('metric'); e.value = '0'; e.dispatchEvent(new Event('change')); })()");
			out("window_" + a + "_" + b, calls + "|" + bytes + "|" + await eval_("document.getElementById('summary').textContent"));
		}
		out("window_note", await eval_("document.getElementById('window-note').textContent"));
		await s("Page.captureScreenshot", { format: "png" }).then((r) => fs.writeFileSync(shot, Buffer.from(r.data, "base64")));
		await eval_("document.getElementById('window-reset').click()");
		out("window_reset", await eval_("window.mf.total()"));
		out("requests", requests.filter((u) => u !== url));
		out("errors", errors);
		return;
	}
	// a click zooms: the frame clicked becomes the zoomed one and fills the width
	const box = await eval_("window.mf.find(" + JSON.stringify(frame) + ")");
	out("found", !!box);
	if (box) {
		out("width_before", Math.round(box.w));
		const t = Date.now();
		await click(box.x, box.y);
		out("click_ms", Date.now() - t);
		out("zoomed", await eval_("window.mf.zoomText()"));
		const after = await eval_("window.mf.find(" + JSON.stringify(frame) + ")");
		out("width_after", after ? Math.round(after.w) : -1);
	}
	// a search highlights: the frame's pixels take the highlight colour, and the share matched
	// is said
	await eval_("(() => { const e = document.getElementById('search'); e.value = " + JSON.stringify("^" + frame + "$") +
		"; e.dispatchEvent(new Event('input')); })()");
	out("matched", await eval_("document.getElementById('matched').textContent"));
	const hit = await eval_("window.mf.find(" + JSON.stringify(frame) + ")");
	if (hit) out("pixel", await eval_("window.mf.pixel(" + (hit.left + 1) + "," + (hit.y - 6) + ")"));
	await s("Page.captureScreenshot", { format: "png" }).then((r) => fs.writeFileSync(shot, Buffer.from(r.data, "base64")));
	// numbers on a rounding tie, as the page writes them (t_html.sh sets them beside printf's)
	out("ties", await eval_("(() => { const f = window.mf.format; return [f.bytes(6400), f.bytes(7936), " +
		"f.time(1250), f.time(2.5), f.pct(1, 800), f.pct(3, 800)].join('|'); })()"));
	// the metric switch, the flame orientation and the table
	await eval_("(() => { const e = document.getElementById('metric'); e.value = '1'; e.dispatchEvent(new Event('change')); })()");
	out("total_bytes", await eval_("window.mf.total()"));
	// every metric the switch lists, by its name: the page's total of each
	const totals = {};
	for (const [value, name] of await eval_("Array.from(document.getElementById('metric').options).map((o) => [o.value, o.textContent])")) {
		await eval_("(() => { const e = document.getElementById('metric'); e.value = " + JSON.stringify(value) +
			"; e.dispatchEvent(new Event('change')); })()");
		totals[name] = await eval_("window.mf.total()");
	}
	out("totals", totals);
	await eval_("(() => { const e = document.getElementById('orient'); e.value = 'flame'; e.dispatchEvent(new Event('change')); })()");
	out("flame_found", !!(await eval_("window.mf.find(" + JSON.stringify(frame) + ")")));
	await eval_("(() => { const e = document.getElementById('metric'); e.value = '0'; e.dispatchEvent(new Event('change')); })()");
	out("table_ms", Math.round(await eval_("new Promise((r) => { const d = document.getElementById('tree'), t = performance.now(); " +
		"d.addEventListener('toggle', () => setTimeout(() => r(performance.now() - t), 0), { once: true }); d.open = true; })")));
	out("table_first", await eval_("(() => { const r = document.querySelector('#table tbody tr'); return r ? Array.from(r.cells).map((c) => c.textContent).join('|') : ''; })()"));
	out("table_rows", await eval_("document.querySelectorAll('#table tbody tr').length"));
	// a metric of bytes or of nanoseconds other than bytes and time, in its unit (the open
	// table's first row), where the page has it
	for (const name of ["max-live", "lifetime"]) {
		const row = await eval_("(() => { const e = document.getElementById('metric'); const o = Array.from(e.options).find((o) => " +
			"o.textContent === " + JSON.stringify(name) + "); if (!o) return null; e.value = o.value; e.dispatchEvent(new Event('change')); " +
			"const r = document.querySelector('#table tbody tr'); " +
			"return r ? Array.from(r.cells).map((c) => c.textContent).join('|') : ''; })()");
		if (row !== null) out("first_" + name, row);
	}
	await eval_("(() => { const e = document.getElementById('metric'); e.value = '0'; e.dispatchEvent(new Event('change')); })()");
	const table = "Array.from(document.querySelectorAll('#table tbody tr')).map((r) => Array.from(r.cells).map((c) => c.textContent).join('|')).join('\\t')";
	out("table", await eval_(table));
	// frames by function and line: the tree as mf_print prints it
	await eval_("(() => { const e = document.getElementById('mode'); e.value = 'line'; e.dispatchEvent(new Event('change')); })()");
	out("table_lines", await eval_(table));
	// blocks freed at once, and every path at threshold 0, those with none too
	await eval_("(() => { const e = document.getElementById('metric'); for (const o of e.options) " +
		"if (o.textContent === 'temporary') e.value = o.value; e.dispatchEvent(new Event('change')); " +
		"const t = document.getElementById('threshold'); window.threshold_was = t.value; t.value = '0'; t.dispatchEvent(new Event('change')); })()");
	out("table_temporary", await eval_(table));
	await eval_("(() => { const e = document.getElementById('metric'); e.value = '0'; e.dispatchEvent(new Event('change')); " +
		"const t = document.getElementById('threshold'); t.value = window.threshold_was; t.dispatchEvent(new Event('change')); })()");
	await eval_("(() => { const e = document.getElementById('mode'); e.value = 'function'; e.dispatchEvent(new Event('change')); })()");
	if (proc !== "") {
		// (the option of the process of this pid: "name PID (how it ended)")
		await eval_("(() => { const e = document.getElementById('process'); for (const o of e.options) " +
			"if (o.textContent.split(' ')[1] === " + JSON.stringify(proc) + ") e.value = o.value; " +
			"e.dispatchEvent(new Event('change')); })()");
		out("total_process", await eval_("window.mf.total()"));
		out("threads_listed", await eval_("document.getElementById('thread').options.length - 1"));
		await eval_("(() => { const e = document.getElementById('process'); e.value = '-1'; e.dispatchEvent(new Event('change')); })()");
		out("total_all_again", await eval_("window.mf.total()"));
		// among the threads of every process, the one of that pid ("pid/tid name")
		out("threads_all", await eval_("document.getElementById('thread').options.length - 1"));
		await eval_("(() => { const e = document.getElementById('thread'); for (const o of e.options) " +
			"if (o.textContent.startsWith(" + JSON.stringify(proc + "/") + ")) e.value = o.value; " +
			"e.dispatchEvent(new Event('change')); })()");
		out("total_thread", await eval_("window.mf.total()"));
	}
	out("requests", requests.filter((u) => u !== url));
	out("errors", errors);
}

const timer = setTimeout(() => { out("error", "timed out; chromium said: " + stderr.slice(-500)); finish(1); }, 120000);
function finish(code) {
	clearTimeout(timer);
	// (its profile directory goes once it has exited: it writes there until then)
	browser.on("exit", () => {
		try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* left in tmp */ }
		process.exit(code);
	});
	browser.kill("SIGKILL");
}
main().then(() => finish(0), (e) => { out("error", String(e && e.stack || e) + " chromium: " + stderr.slice(-500)); finish(1); });
