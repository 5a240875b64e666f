#!/usr/bin/python3
"""console_browser.py -- drives the daemon's web console in headless
Chromium (Debian's chromium, chromium-driver, python3-selenium), for
tests/integration/console_browser.sh.

    console_browser.py URL SHOTS_DIR WORK_DIR

The daemon at URL runs the cloudsim broker config (its demo tokens);
GB, CONF, SPEC_A come from the environment (the CLI, its config, a pool
spec to apply through the daemon).  Prints "ok: ..." for each check and
exits 0 when all pass, 1 at the first failure (saying what), 77 when the
browser cannot start here (saying why).
"""
import json
import re
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as e:
    print("SKIP: python3-selenium is missing (%s); make deps installs it" % e)
    sys.exit(77)

URL, SHOTS, WORK = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
ORIGIN = urllib.parse.urlsplit(URL)
OPERATOR, VIEWER, ADMIN = "demo-ci-token", "demo-viewer-token", "demo-admin-token"
POOL = "console-a"
WAIT_S = 30

requests_seen = []   # every request the page made (performance log)
browser_log = []     # the console messages of the page


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    try:
        shot("failure")
        print("page text at the failure:\n" + driver.find_element(By.TAG_NAME, "body").text,
              file=sys.stderr)
    except Exception:  # noqa: BLE001 (the failure is what matters)
        pass
    sys.exit(1)


def ok(msg):
    print("ok: " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    ok(msg)


def wait_for(what, fn, timeout=WAIT_S):
    """Polls fn (given the driver) until it returns something true."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2,
                             ignored_exceptions=(WebDriverException,)).until(fn)
    except TimeoutException:
        fail("timed out after %ss waiting for %s" % (timeout, what))


shot_n = 0


def shot(name):
    global shot_n
    shot_n += 1
    driver.save_screenshot(os.path.join(SHOTS, "%02d-%s.png" % (shot_n, name)))


def collect_logs():
    """Moves the browser's performance and console logs into our lists
    (chromedriver hands each entry out once)."""
    for e in driver.get_log("performance"):
        m = json.loads(e["message"])["message"]
        if m.get("method") == "Network.requestWillBeSent":
            req = m["params"]["request"]
            requests_seen.append(req)
    browser_log.extend(driver.get_log("browser"))


def text(css):
    els = driver.find_elements(By.CSS_SELECTOR, css)
    return els[0].text if els else ""


def visible(css):
    els = driver.find_elements(By.CSS_SELECTOR, css)
    return bool(els) and els[0].is_displayed()


def api(method, path, token, body=None):
    """The API directly (not through the page): (status, JSON)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def cli(*args, token=OPERATOR):
    env = dict(os.environ, GPUBROKER_SERVER=URL, GPUBROKER_TOKEN=token)
    r = subprocess.run([os.environ["GB"], "-c", os.environ["CONF"], "--server", URL] + list(args),
                       env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("gpubroker %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def sign_in(token):
    wait_for("the sign-in form", lambda d: visible("#signin"))
    box = driver.find_element(By.ID, "token")
    box.clear()
    box.send_keys(token)
    box.send_keys(Keys.ENTER)   # the keyboard signs in


def sign_out():
    driver.find_element(By.ID, "signout").click()
    wait_for("the sign-in form after signing out", lambda d: visible("#signin"))
    check(driver.execute_script("return sessionStorage.length") == 0,
          "signing out forgets the token (sessionStorage is empty)")


def pool_row_cells():
    """The pools table's row of POOL as its cells' texts, or None."""
    return driver.execute_script(
        "const r = document.querySelector('tr[data-pool=\"' + arguments[0] + '\"]');"
        "return r ? [...r.cells].map((c) => c.textContent) : null;", POOL)


def confirm_dialog(expect_in_text, typed=None, keyboard=False):
    wait_for("the confirmation dialog", lambda d: d.find_element(By.ID, "confirm").get_attribute("open") is not None)
    t = text("#confirm-text")
    check(expect_in_text in t, "the confirmation names the pool: %r" % t)
    if typed is not None:
        ok_btn = driver.find_element(By.ID, "confirm-ok")
        check(not ok_btn.is_enabled(), "destroy stays disabled until the pool's name is typed")
        driver.find_element(By.ID, "confirm-typed").send_keys(typed)
    if not keyboard:
        driver.find_element(By.ID, "confirm-ok").click()
        return
    # the dialog opens on Cancel (the safe choice); Tab reaches OK
    check(driver.switch_to.active_element.get_attribute("id") == "confirm-cancel",
          "the confirmation opens with Cancel focused")
    driver.switch_to.active_element.send_keys(Keys.TAB)
    check(driver.switch_to.active_element.get_attribute("id") == "confirm-ok", "Tab moves to OK")
    driver.switch_to.active_element.send_keys(Keys.ENTER)


def click_link(label):
    """Clicks the link; again if a refresh replaced it under the click."""
    wait_for("a link %r to click" % label,
             lambda d: d.find_element(By.LINK_TEXT, label).click() or True)


def scale_in_page(frm, to, keyboard=False):
    """On a pool's page: scale to `to`, through the confirmation, with
    the mouse or with the keyboard alone."""
    box = driver.find_element(By.ID, "scale-count")
    box.clear()
    if keyboard:
        box.send_keys(str(to) + Keys.ENTER)
    else:
        box.send_keys(str(to))
        driver.find_element(By.ID, "scale-button").click()
    confirm_dialog("Scale pool %s from %d to %d" % (POOL, frm, to), keyboard=keyboard)


# ------------------------------------------------------------ browser
opts = webdriver.ChromeOptions()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--no-first-run", "--no-default-browser-check", "--disable-extensions",
          "--disable-background-networking", "--disable-sync", "--disable-translate",
          "--disable-component-update", "--metrics-recording-only",
          "--window-size=1280,900", "--user-data-dir=" + os.path.join(WORK, "chromium")):
    opts.add_argument(a)
opts.binary_location = "/usr/bin/chromium"
opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
try:
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver",
                                              log_path=os.path.join(WORK, "chromedriver.log")),
                              options=opts)
except WebDriverException as e:
    print("SKIP: headless chromium does not start here: %s" % str(e).strip().splitlines()[0])
    sys.exit(77)

try:
    driver.set_page_load_timeout(WAIT_S)
    driver.get(URL + "/")
    wait_for("the sign-in form", lambda d: visible("#signin"))
    check(driver.title == "gpubroker console", "GET / is the console (title %r)" % driver.title)
    shot("signin")

    # ---- a wrong token is refused with the API's words
    sign_in("not-a-token-of-this-broker")
    wait_for("the refusal", lambda d: visible("#error"))
    check(text("#error") == "the bearer token is not valid for this broker",
          "a wrong token is refused with the API's message (%r)" % text("#error"))
    check(driver.execute_script("return sessionStorage.length") == 0,
          "and nothing is kept in sessionStorage")
    check(visible("#signin") and not visible("#view"), "and the console stays on the sign-in form")
    shot("signin-refused")

    # ---- the operator signs in: no pools yet
    sign_in(OPERATOR)
    wait_for("the empty pools list", lambda d: visible("#pools-empty"))
    check(text("#pools-empty").startswith("Nothing here yet"), "no pools: 'Nothing here yet', not an empty table")
    check(text("#who") == "Signed in as demo-ci (operator, team research)",
          "the header says who is signed in (%r)" % text("#who"))
    check(driver.execute_script("return sessionStorage.getItem('gpubroker.token')") == OPERATOR,
          "the token is kept in this tab's sessionStorage")
    check(driver.execute_script("return document.cookie") == "", "and in no cookie")
    shot("pools-empty")

    # ---- a pool applied with the CLI appears and changes live
    driver.execute_script("window.__same_page = true;"
                          "window.__seen = [];"
                          "new MutationObserver(() => {"
                          "  const r = document.querySelector('tr[data-pool=\"%s\"]');"
                          "  if (r) window.__seen.push([...r.cells].map((c) => c.textContent));"
                          "}).observe(document.getElementById('view'), {subtree: true, childList: true, characterData: true});"
                          % POOL)
    cli("apply", "--auto-approve", "-f", os.environ["SPEC_A"])
    wait_for("the applied pool in the list", lambda d: pool_row_cells() is not None)
    ok("the pool applied with the CLI appears without a reload")
    wait_for("the pool's instances running", lambda d: (pool_row_cells() or [""] * 5)[4] == "2 / 2")
    seen = driver.execute_script("return window.__seen")
    check(any(c[4] == "2 / 0" for c in seen) and seen[-1][4] == "2 / 2",
          "its desired / running went from 2 / 0 to 2 / 2 live (%d renders seen)" % len(seen))
    check(driver.execute_script("return window.__same_page === true"), "all in the same page (no reload)")
    cells = pool_row_cells()
    check(cells[1] == "research" and cells[2] == "training" and cells[5] == "aws" and cells[6].startswith("$")
          and cells[7] != "-", "the row shows team, purpose, clouds, $/h and TTL left: %r" % cells)
    shot("pools-live")

    # filters: by team and state
    wait_for("the filters' choices", lambda d: "research" in text("#filter-team") and "active" in text("#filter-state"))
    Select(driver.find_element(By.ID, "filter-team")).select_by_visible_text("research")
    Select(driver.find_element(By.ID, "filter-state")).select_by_visible_text("active")
    check(pool_row_cells() is not None, "filtered by its team and state, the pool stays")
    Select(driver.find_element(By.ID, "filter-state")).select_by_visible_text("every state")
    Select(driver.find_element(By.ID, "filter-team")).select_by_visible_text("every team")

    # ---- its page, opened with the keyboard: the focus on its link
    # outlives the list's refreshes
    driver.execute_script("document.querySelector('a[href=\"#/pool/%s\"]').focus();"
                          "document.getElementById('pools').dataset.old = '1';" % POOL)
    wait_for("a refresh of the list", lambda d: d.execute_script(
        "const t = document.getElementById('pools'); return t && !t.dataset.old"), timeout=15)
    check(driver.switch_to.active_element.get_attribute("href").endswith("#/pool/" + POOL),
          "the focus stays on the pool's link across a refresh of the list")
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for("the pool page's instances", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#instances tbody tr")) == 2)
    check("running" in text("#instances tbody tr") and "us-east-1" in text("#instances tbody tr"),
          "the pool page lists its instances (cloud, region, state)")
    wait_for("the pool's events", lambda d: d.find_elements(By.CSS_SELECTOR, "#events li[data-kind='running']"))
    kinds = [li.get_attribute("data-kind") for li in driver.find_elements(By.CSS_SELECTOR, "#events li")]
    check("applied" in kinds and "created" in kinds, "and its events (%s)" % ", ".join(sorted(set(kinds))))
    # the API's times (RFC 3339, docs/json.md) read as times: each event's
    # and each instance's age
    times = [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#events li time")]
    check(times and all(re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$", t) for t in times),
          "each event shows its time (%s)" % (times[0] if times else "none"))
    ages = [tr.find_elements(By.TAG_NAME, "td")[-1].text for tr in driver.find_elements(By.CSS_SELECTOR, "#instances tbody tr")]
    check(ages and all(a != "-" and a[0].isdigit() for a in ages), "and each instance its age (%s)" % ", ".join(ages))
    check(driver.current_url.endswith("#/pool/" + POOL), "the pool page has its own address")
    driver.find_element(By.CSS_SELECTOR, "#decision summary").click()
    wait_for("the placement decision", lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-candidates-decision tbody tr"))
    status, dec = api("GET", "/v1/pools/%s/plan" % POOL, OPERATOR)
    rows = driver.find_elements(By.CSS_SELECTOR, "#plan-candidates-decision tbody tr")
    refused = driver.find_elements(By.CSS_SELECTOR, "#plan-refusals-decision tbody tr")
    rules = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#plan-rule-decision option")][1:]
    sample = dec["plan"].get("refusals", [])
    check(status == 200 and len(rows) == len(dec["plan"]["candidates"]) and rows[0].text.startswith("1 aws us-east-1")
          and sorted(rules) == sorted(dec["plan"]["refused"]) and len(sample) > 0
          and len(refused) == min(len(sample), 200) and all(r.find_elements(By.TAG_NAME, "td")[-1].text for r in refused)
          and all(sum(1 for o in sample if o["rule"] == k) <= dec["plan"]["refusals_per_rule"] for k in rules),
          "its placement decision: the candidates the apply walked (%d), every rule with its count (%d), "
          "and the first offers each refused, with why (%d)" % (len(rows), len(rules), len(refused)))
    driver.find_element(By.CSS_SELECTOR, "#spec summary").click()
    wait_for("the pool's spec", lambda d: visible("#pool-spec"))
    spec = json.loads(text("#pool-spec"))
    check(spec["name"] == POOL and spec["count"] == 2 and spec["lifecycle"]["ttl"]
          and spec["user_data"].startswith("(") and "do-not-show" not in text("#pool-spec"),
          "its spec as applied, the user data not shown (%r)" % spec["user_data"])
    shot("pool-page")

    # ---- the operator scales it; the new events stream in
    n_events = len(kinds)
    scale_in_page(2, 3)
    wait_for("the scale's notice", lambda d: visible("#notice"))
    check(text("#notice") == "Scale of pool %s to 3 accepted." % POOL, "the operator's scale is accepted")
    wait_for("a third instance", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#instances tbody tr")) == 3)
    wait_for("the new events", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#events li")) > n_events)
    ok("the third instance and its events appear live (the events long poll)")
    status, body = api("GET", "/v1/pools/" + POOL, ADMIN)
    check(status == 200 and body["desired"] == 3, "the API says desired is 3")
    shot("pool-scaled")

    # ---- a viewer sees, and is refused by the API when it acts
    sign_out()
    sign_in(VIEWER)
    wait_for("the viewer's pools", lambda d: pool_row_cells() is not None)
    check(text("#who") == "Signed in as demo-viewer (viewer, team research)", "the viewer is signed in")
    click_link(POOL)
    wait_for("the pool page", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#instances tbody tr")) == 3)
    scale_in_page(3, 1, keyboard=True)
    wait_for("the viewer's refusal", lambda d: visible("#error"))
    check(text("#error") == "token 'demo-viewer' is a viewer and cannot change anything; use an operator or admin token",
          "the viewer's scale is refused with the API's message (%r)" % text("#error"))
    status, body = api("GET", "/v1/pools/" + POOL, ADMIN)
    check(body["desired"] == 3, "and nothing changed (desired still 3)")
    shot("viewer-refused")
    click_link("Audit")
    wait_for("the audit refusal", lambda d: visible("#error"))
    check(text("#error") == "this needs an admin token; token 'demo-viewer' is viewer"
          and not driver.find_elements(By.ID, "audit"),
          "the audit log, for admins, is refused to the viewer by the API (%r)" % text("#error"))
    driver.back()
    wait_for("the pool page again", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#instances tbody tr")) == 3)

    # ---- phone width
    driver.set_window_size(390, 844)
    time.sleep(0.3)
    check(driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"),
          "the pool page fits a phone-sized window (tables scroll inside their box)")
    shot("pool-phone")
    driver.get(URL + "/#/pools")
    wait_for("the pools list after a reload", lambda d: pool_row_cells() is not None)
    ok("a reload keeps the tab signed in (sessionStorage)")
    shot("pools-phone")
    driver.set_window_size(1280, 900)

    # ---- an admin destroys it, confirming with its name
    sign_out()
    sign_in(ADMIN)
    wait_for("the admin's pools", lambda d: pool_row_cells() is not None)
    click_link(POOL)
    wait_for("the pool page", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#instances tbody tr")) == 3)
    driver.find_element(By.ID, "destroy-button").click()
    confirm_dialog("Destroy pool %s and terminate its 3 instances" % POOL, typed=POOL)
    wait_for("the pool destroyed", lambda d: text("#pool-state") == "destroyed")
    wait_for("the destroyed event", lambda d: d.find_elements(By.CSS_SELECTOR, "#events li[data-kind='destroyed']"))
    ok("the admin's destroy is accepted, and the pool's state and events follow it live")
    shot("pool-destroyed")

    # ---- cost and offers
    click_link("Cost")
    wait_for("the cost table", lambda d: d.find_elements(By.CSS_SELECTOR, "#cost tbody tr[data-key='research']"))
    status, cost = api("GET", "/v1/cost?by=team", ADMIN)
    want = "$%.2f" % cost["total"] if cost["total"] >= 0.01 else "$%.4f" % cost["total"]
    check(text("#cost-total") == want, "the cost view's total is the API's (%s)" % want)
    check(driver.find_elements(By.CSS_SELECTOR, "svg.chart rect"), "with a chart")
    shot("cost")
    Select(driver.find_element(By.ID, "cost-period")).select_by_visible_text("last hour")
    wait_for("the cost over time", lambda d: d.find_elements(By.CSS_SELECTOR, "#cost-time rect[data-key='research']"))
    slices = [float(r.get_attribute("data-cost"))
              for r in driver.find_elements(By.CSS_SELECTOR, "#cost-time rect")]
    status, hour = api("GET", "/v1/cost?by=team&since=%d" % (time.time() - 3600), ADMIN)
    check(len(slices) == 12 and hour["total"] > 0 and abs(sum(slices) - hour["total"]) < 1e-6,
          "over the last hour, 12 slices that add up to the API's cost of the hour (%.6f vs %.6f)"
          % (sum(slices), hour["total"]))
    check(sum(1 for v in slices if v > 0) >= 1 and slices[0] == 0,
          "the cost is in the slices where the pool ran (not the hour's first)")
    shot("cost-over-time")
    Select(driver.find_element(By.ID, "cost-by")).select_by_visible_text("label")
    wait_for("the label key's prompt", lambda d: visible("#cost-label") and "Name a label key" in text("#cost-body"))
    driver.find_element(By.ID, "cost-label").send_keys("tier" + Keys.TAB)
    wait_for("the cost by label", lambda d: d.find_elements(By.CSS_SELECTOR, "#cost tbody tr"))
    check(text("#cost tbody tr").startswith("(none) "), "by a label the pool lacks: '(none)', as the API groups it")
    click_link("Offers")
    wait_for("the offers form", lambda d: visible("#offers-gpu"))
    driver.find_element(By.ID, "offers-gpu").send_keys("NoSuchGPU" + Keys.ENTER)
    wait_for("the offers refusal", lambda d: visible("#error"))
    check(text("#error") == "unknown GPU model NoSuchGPU", "a bad filter shows the API's message")
    box = driver.find_element(By.ID, "offers-gpu")
    box.clear()
    box.send_keys("A10G")
    driver.find_element(By.ID, "offers-cloud").send_keys("aws" + Keys.ENTER)
    wait_for("the offers", lambda d: d.find_elements(By.CSS_SELECTOR, "#offers tbody tr"))
    rows = driver.find_elements(By.CSS_SELECTOR, "#offers tbody tr")
    check(all("A10G" in r.text and r.text.startswith("aws") for r in rows), "offers filtered by GPU and cloud (%d)" % len(rows))
    shot("offers")
    # ---- plan preview: a spec file uploaded, then a spec with a mistake
    click_link("Plan")
    wait_for("the plan form", lambda d: visible("#plan-spec"))
    driver.find_element(By.ID, "plan-file").send_keys(os.environ["SPEC_PLAN"])
    wait_for("the uploaded spec", lambda d: "pool:" in d.find_element(By.ID, "plan-spec").get_attribute("value"))
    driver.find_element(By.CSS_SELECTOR, "#plan-form button[type='submit']").click()
    wait_for("the plan", lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-candidates-0 tbody tr"))
    with open(os.environ["SPEC_PLAN"], "rb") as f:
        req = urllib.request.Request(URL + "/v1/plan?explain=1&limit=20", data=f.read(), method="POST",
                                     headers={"Authorization": "Bearer " + ADMIN,
                                              "Content-Type": "application/yaml"})
    with urllib.request.urlopen(req, timeout=30) as r:
        plans = json.load(r)["plans"]
    plan = plans[0]
    cands = driver.find_elements(By.CSS_SELECTOR, "#plan-candidates-0 tbody tr")
    check(len(driver.find_elements(By.CSS_SELECTOR, "table[id^='plan-candidates-']")) == len(plans),
          "one plan per pool of the file (%d)" % len(plans))
    check(len(cands) == len(plan["candidates"]) > 0 and cands[0].text.startswith("1 " + plan["candidates"][0]["cloud"]),
          "the plan preview ranks the API's candidates (%d of %d, first %r)" % (len(cands), len(plan["candidates"]), [c.text for c in cands][:4]))
    Select(driver.find_element(By.ID, "plan-rule-0")).select_by_value("region")
    rules = {r.get_attribute("data-rule") for r in driver.find_elements(By.CSS_SELECTOR, "#plan-refusals-0 tbody tr")}
    check(rules == {"region"} and plan["refused"]["region"] > 0,
          "and why the other offers were refused, filtered by rule (region: %d)" % plan["refused"]["region"])
    shot("plan")
    box = driver.find_element(By.ID, "plan-spec")
    box.clear()
    box.send_keys("pool:\n  name: typo\n  team: research\n  count: 1\n  gpu: {model: A10G}\n  gpuu: 2\n")
    driver.find_element(By.CSS_SELECTOR, "#plan-form button[type='submit']").click()
    wait_for("the refusal of the spec", lambda d: visible("#error"))
    check(text("#error").startswith("the pool spec is invalid (1 problems)")
          and 'line 6 column 3: pool.gpuu: unknown key "gpuu"; did you mean "gpu"?' in text("#error"),
          "a spec with a mistake: the API's message and where (%r)" % text("#error"))
    click_link("Nodes")
    wait_for("the on-prem nodes", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#nodes tbody tr")) == 2)
    check("lab-a100-01" in text("#nodes tbody tr") and "4 × A100-80GB" in text("#nodes tbody tr"),
          "the nodes view lists the demo lab's nodes")
    shot("nodes")
    click_link("Audit")
    wait_for("the audit log", lambda d: d.find_elements(By.CSS_SELECTOR, "#audit tbody tr"))
    audit = driver.execute_script("return [...document.querySelectorAll('#audit tbody tr')]"
                                  ".map((r) => [...r.cells].map((c) => c.textContent))")
    check(any(r[1] == "demo-ci" and r[4] == "scale" and r[6] == "202" for r in audit)
          and any(r[1] == "demo-viewer" and r[4] == "scale" and r[5] == POOL and r[6] == "403" for r in audit)
          and any(r[1] == "demo-admin" and r[4] == "destroy" and r[6] == "202" for r in audit),
          "the admin's audit log holds the operator's scale, the viewer's refusal and the destroy")
    shot("audit")

    # ---- no request left the daemon's origin; the token never in a URL
    collect_logs()
    urls = [r["url"] for r in requests_seen]
    check(len(urls) >= 20 and any("/v1/events?" in u and "wait=" in u for u in urls),
          "the performance log holds the page's requests (%d), long polls included" % len(urls))
    # from the console's first request on (before it: the browser's own
    # blank tab), every request of any scheme went to the daemon
    first = next((i for i, u in enumerate(urls) if u.startswith(URL + "/")), None)
    check(first is not None, "the log holds the console's own first request")
    foreign = [u for u in urls[first:] if urllib.parse.urlsplit(u)[:2] != ORIGIN[:2]]
    foreign += [u for u in urls[:first] if u.startswith(("http:", "https:", "ws:", "wss:"))]
    check(not foreign, "every request went to the daemon's origin %s://%s (others: %s)" %
          (ORIGIN.scheme, ORIGIN.netloc, foreign[:5]))
    entries = driver.execute_script("return performance.getEntries().map((e) => e.name)")
    foreign = [u for u in entries if u.startswith(("http:", "https:")) and urllib.parse.urlsplit(u)[:2] != ORIGIN[:2]]
    check(not foreign, "and so say the page's own resource timings (%d entries)" % len(entries))
    leaks = [u for u in urls if any(t in u for t in (OPERATOR, VIEWER, ADMIN, "not-a-token"))]
    check(not leaks, "no token in any URL")
    api_reqs = [r for r in requests_seen if "/v1/" in r["url"] and "/v1/whoami" not in r["url"]]
    check(api_reqs and all(r.get("headers", {}).get("Authorization", "").startswith("Bearer ") for r in api_reqs),
          "every API request carried the token as a Bearer header")
    csp = [e["message"] for e in browser_log if "Content Security Policy" in e["message"]]
    check(not csp, "no Content-Security-Policy violation (%s)" % csp[:3])
    errs = [e["message"] for e in browser_log if "Uncaught" in e["message"]]
    check(not errs, "no uncaught script error (%s)" % errs[:3])
finally:
    driver.quit()
print("PASS")
