// regua render instrumentation. Evaluated by the renderer through DevTools (page scripts are
// disabled and forbidden by CSP; this code never comes from the artifact). One entry point:
// (arg) => result, dispatching on arg.op.
(arg) => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const SMIL = ["animate", "animateTransform", "animateMotion", "set", "animateColor"];
  const SKIP = new Set([
    "clipPath", "mask", "pattern", "marker", "filter", "linearGradient", "radialGradient",
    "foreignObject", "style", "script", "title", "desc", "metadata",
  ]);
  const root = document.documentElement;
  const W = window;

  function animations() {
    try { return document.getAnimations(); } catch (e) { return []; }
  }
  function kindOf(a) {
    const n = a && a.constructor ? a.constructor.name : "";
    if (n === "CSSAnimation") return "css-animation";
    if (n === "CSSTransition") return "css-transition";
    return "web-animation";
  }
  function smilCount() {
    let n = 0;
    for (const name of SMIL) n += document.getElementsByTagNameNS(SVGNS, name).length;
    return n;
  }
  function seek(t) {
    const kinds = new Set();
    for (const s of document.getElementsByTagNameNS(SVGNS, "svg")) {
      if (typeof s.pauseAnimations === "function") {
        s.pauseAnimations();
        s.setCurrentTime(t);
      }
    }
    if (smilCount() > 0) kinds.add("smil");
    let count = 0;
    for (const a of animations()) {
      kinds.add(kindOf(a));
      count += 1;
      try { a.pause(); a.currentTime = t * 1000; } catch (e) { /* keep going */ }
    }
    return { kinds: Array.from(kinds).sort(), animations: count };
  }
  function inspect() {
    const errs = document.getElementsByTagNameNS("http://www.w3.org/1999/xhtml", "parsererror");
    const pe = errs.length ? (errs[0].textContent || "").slice(0, 300) : null;
    return {
      root: root ? root.localName : null,
      root_ns: root ? root.namespaceURI : null,
      elements: document.getElementsByTagName("*").length,
      parse_error: pe,
      // Chromium's built-in XML tree viewer replaced a document outside SVG/XHTML/HTML.
      xml_viewer: !!(document.getElementById("webkit-xml-viewer-source-xml") &&
        document.getElementById("xml-viewer-style")),
      scripts: document.getElementsByTagNameNS(SVGNS, "script").length +
        document.getElementsByTagNameNS("http://www.w3.org/1999/xhtml", "script").length,
      refresh: refreshes(),
    };
  }
  function refreshes() {
    // <meta http-equiv="refresh"> anywhere (the policy's sandbox refuses to follow them)
    const out = [];
    for (const m of document.getElementsByTagName("meta")) {
      if ((m.getAttribute("http-equiv") || "").toLowerCase() === "refresh") {
        out.push((m.getAttribute("content") || "").slice(0, 300));
      }
    }
    return out.slice(0, 20);
  }

  // ---- the animated state at the seeked time: equal keys render equal pixels -------------
  // Every time-dependent input of a paused, script-free document: each CSS/Web animation's
  // progress, and each SMIL animation's target value (its DOM animVal, computed style and
  // transform). null when some value cannot be read (then nothing is reused).
  function ser(v) {
    if (v === null || v === undefined) return "~";
    const t = typeof v;
    if (t === "number" || t === "string" || t === "boolean") return String(v);
    if (t !== "object") return null;
    if (typeof v.numberOfItems === "number") {
      const items = [];
      for (let i = 0; i < v.numberOfItems; i++) {
        const item = ser(v.getItem(i));
        if (item === null) return null;
        items.push(item);
      }
      return "[" + items.join(",") + "]";
    }
    if ("matrix" in v && "type" in v) return v.type + ":" + ser(v.matrix);  // SVGTransform
    if ("a" in v && "f" in v) return [v.a, v.b, v.c, v.d, v.e, v.f].join(" ");  // matrix
    if (typeof v.value === "number") return String(v.value);  // SVGLength, SVGNumber, SVGAngle
    if ("width" in v && "height" in v) return [v.x, v.y, v.width, v.height].join(" ");
    if ("x" in v && "y" in v) return v.x + " " + v.y;  // point
    if ("align" in v && "meetOrSlice" in v) return v.align + " " + v.meetOrSlice;
    return null;
  }
  const DOM_NAMES = { "xlink:href": "href", "class": "className", "points": "animatedPoints" };
  function smilValue(anim) {
    const el = anim.targetElement;
    if (!el) return "~";
    const name = (anim.getAttribute("attributeName") || "").trim();
    if (anim.localName === "animateMotion") return ser(el.getCTM());
    if (anim.localName === "animateTransform") return ser(el.transform && el.transform.animVal);
    const parts = [];
    const prop = DOM_NAMES[name] || name;
    const animated = prop && el[prop];
    if (animated && typeof animated === "object" && "animVal" in animated) {
      const s = ser(animated.animVal);
      if (s === null) return null;
      parts.push(s);
    } else if (prop === "animatedPoints" && el.animatedPoints) {
      parts.push(ser(el.animatedPoints));
    } else if (prop === "stdDeviation" && el.stdDeviationX) {
      parts.push(ser(el.stdDeviationX.animVal), ser(el.stdDeviationY.animVal));
    }
    const css = getComputedStyle(el).getPropertyValue(name);
    if (!parts.length && !css) return null;
    parts.push(css);
    return parts.join("|");
  }
  function stateKey() {
    try {
      const all = document.getElementsByTagName("*");
      const index = new Map();
      for (let i = 0; i < all.length; i++) index.set(all[i], i);
      const out = [all.length];
      for (const name of SMIL) {
        for (const a of document.getElementsByTagNameNS(SVGNS, name)) {
          const v = smilValue(a);
          if (v === null) return null;
          out.push(index.get(a) + "=" + v);
        }
      }
      for (const a of animations()) {
        const target = a.effect && a.effect.target;
        const timing = a.effect ? a.effect.getComputedTiming() : null;
        if (!timing) return null;
        out.push((target ? index.get(target) : "~") + ":" + kindOf(a) + ":" +
          (a.animationName || a.transitionProperty || "") + ":" + ser(timing.progress));
      }
      return out.join(";");
    } catch (e) {
      return null;
    }
  }

  // ---- part masks -------------------------------------------------------------------------
  function paintable() {
    const out = [];
    if (!root) return out;
    const stack = [root];
    while (stack.length) {
      const el = stack.pop();
      if (SKIP.has(el.localName)) continue;
      out.push(el);
      for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
    }
    return out;
  }
  function setImp(st, name, value) { st.setProperty(name, value, "important"); }
  function cancelNewTransitions(before) {
    for (const a of animations()) {
      if (!before.has(a) && kindOf(a) === "css-transition") { try { a.cancel(); } catch (e) {} }
    }
  }
  function maskApply(parts, paint) {
    const before = new Set(animations());
    const els = paintable();
    const styles = els.map((el) => getComputedStyle(el));
    // no element declares a transition: none can start, so none needs cancelling (each check
    // would force a style recalculation of the whole document)
    const transitions = styles.some((cs) => cs.transitionDuration.split(",").some((d) => parseFloat(d) > 0));
    const reads = styles.map((cs) => ({
      fill: cs.fill !== "none",
      stroke: cs.stroke !== "none",
      op: parseFloat(cs.opacity) > 0 ? "1" : "0",
      fop: parseFloat(cs.fillOpacity) > 0 ? "1" : "0",
      sop: parseFloat(cs.strokeOpacity) > 0 ? "1" : "0",
    }));
    const saved = [];
    els.forEach((el, i) => {
      saved.push([el, el.getAttribute("style")]);
      const st = el.style;
      if (!st) return;
      const r = reads[i];
      setImp(st, "fill", r.fill ? "var(--regua-paint)" : "none");
      setImp(st, "stroke", r.stroke ? "var(--regua-paint)" : "none");
      setImp(st, "opacity", r.op);
      setImp(st, "fill-opacity", r.fop);
      setImp(st, "stroke-opacity", r.sop);
      setImp(st, "filter", "none");
      setImp(st, "shape-rendering", "crispEdges");
      setImp(st, "text-rendering", "optimizeSpeed");
      setImp(st, "-webkit-font-smoothing", "none");
      setImp(st, "mix-blend-mode", "normal");
    });
    const present = {};
    const partEls = {};
    for (const id of parts) {
      const el = document.getElementById(id);
      if (el && el.style && el !== root) { partEls[id] = el; }
    }
    for (const id of Object.keys(partEls)) {
      const anc = [];
      for (let p = partEls[id].parentElement; p; p = p.parentElement) {
        for (const other of Object.keys(partEls)) if (partEls[other] === p) anc.push(other);
      }
      present[id] = anc;
    }
    W.__reguaMask = { saved, els, partEls, before, transitions };
    if (paint) maskPaint(paint);
    if (transitions) cancelNewTransitions(before);
    return { present, painted: els.length };
  }
  function maskPaint(spec) {
    // spec: {root: paint, background: colour, additive: bool, parts: {id: paint}}
    // additive: each part is composited as an isolated group, then added to what is below it
    // (plus-lighter), so parts painted in distinct bits OR together where they overlap.
    const m = W.__reguaMask;
    if (!m) return false;
    // Inside a part, its other elements keep the channel-wise max (lighten), so they never
    // hide the bits of descendant parts, which always hold higher bits (see masks.py).
    const inner = spec.additive ? "lighten" : "normal";
    for (const el of m.els) {
      if (el.style && el !== root) setImp(el.style, "mix-blend-mode", inner);
    }
    if (root && root.style) {
      root.style.setProperty("--regua-paint", spec.root);
      setImp(root.style, "background", spec.background);
    }
    for (const id of Object.keys(m.partEls)) {
      const st = m.partEls[id].style;
      st.setProperty("--regua-paint", spec.parts[id] || spec.root);
      setImp(st, "mix-blend-mode", spec.additive ? "plus-lighter" : "normal");
      setImp(st, "isolation", spec.additive ? "isolate" : "auto");
    }
    if (m.transitions) cancelNewTransitions(m.before);
    return true;
  }
  function maskRestore() {
    const m = W.__reguaMask;
    if (!m) return false;
    for (const [el, style] of m.saved) {
      if (style === null) el.removeAttribute("style"); else el.setAttribute("style", style);
    }
    if (m.transitions) cancelNewTransitions(m.before);
    delete W.__reguaMask;
    return true;
  }

  // ---- timing self-test: a CSS transition and a Web Animation made from outside the page ----
  function selftestSetup(spec) {
    const tr = document.getElementById(spec.transition);
    tr.style.transition = `transform ${spec.duration_ms}ms linear`;
    tr.style.transform = "translateX(0px)";
    getComputedStyle(tr).transform;
    tr.style.transform = `translateX(${spec.distance}px)`;
    getComputedStyle(tr).transform;
    const wa = document.getElementById(spec.web_animation);
    wa.animate(
      [{ transform: "translateX(0px)" }, { transform: `translateX(${spec.distance}px)` }],
      { duration: spec.duration_ms, iterations: Infinity, easing: "linear" },
    );
    // paused at once, as a swapped drawing's are: a transition left running until the first
    // seek would end (and leave the document) on a machine slower than its duration
    return seek(0).kinds;
  }

  function selftestTeardown() {
    // what the next job's swap would do, and the animations made from outside cancelled first
    for (const a of animations()) a.cancel();
    document.replaceChild(document.createElementNS(SVGNS, "svg"), document.documentElement);
    return animations().length;
  }

  // ---- fast path: replace the shell's root with the artifact's (see browser.py) ----------
  function swap(text, t) {
    const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
    const de = parsed.documentElement;
    if (!de || parsed.getElementsByTagName("parsererror").length ||
        de.namespaceURI !== SVGNS || de.localName !== "svg") {
      return { fallback: true };
    }
    document.replaceChild(document.importNode(de, true), document.documentElement);
    return Object.assign(inspectAt(), frame(t));
  }
  function frame(t) {
    // one call per timestamp: undo the previous frame's mask passes, seek, key the state
    maskRestore();
    const info = seek(t);
    info.key = stateKey();
    return info;
  }
  function plan(times) {
    // every timestamp seeked and keyed in one call (no capture between): the frame loop then
    // seeks only the states it has not captured yet (see frames.py)
    return times.map((t) => frame(t));
  }
  function inspectAt() {
    const r = document.documentElement;
    return { root: r.localName, root_ns: r.namespaceURI, parse_error: null, xml_viewer: false,
             elements: document.getElementsByTagName("*").length, scripts: 0, refresh: [] };
  }

  switch (arg.op) {
    case "swap": return swap(arg.text, arg.t);
    case "selftest_setup": return selftestSetup(arg.spec);
    case "selftest_teardown": return selftestTeardown();
    case "seek": return seek(arg.t);
    case "frame": return frame(arg.t);
    case "plan": return plan(arg.times);
    case "inspect": return inspect();
    case "inspect_seek": return Object.assign(inspect(), seek(arg.t));
    case "inspect_frame": return Object.assign(inspect(), frame(arg.t));
    case "mask_apply": return maskApply(arg.parts, arg.paint);
    case "mask_paint": return maskPaint(arg.spec);
    case "mask_restore": return maskRestore();
    default: throw new Error("unknown op " + arg.op);
  }
}
