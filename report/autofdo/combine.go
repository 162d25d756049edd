package autofdo

// Combine makes one profile of the counts of several recordings of one
// program. Counts of a kind add up. A profile with both kinds takes its
// heads and call targets from the calls, which are exact, and its line
// counts from the samples, scaled to executions: per function, by the
// ratio of the calls to the samples on the lines that call (the lines
// whose executions the calls give), else by that ratio over the whole
// program; a line that calls counts at least its calls. Calls of part of
// the run (Counts.Partial) give no heads and no scale of their own: the
// lines and heads are the samples' scaled by the ratio over the whole
// program, and the calls only share out each call site's samples over
// its callees.
func Combine(cs []Counts) *Profile {
	var s, c *Profile
	partial := false
	for _, x := range cs {
		s = addTo(s, x.Samples)
		c = addTo(c, x.Calls)
		partial = partial || x.Partial && x.Calls != nil
	}
	switch {
	case s == nil && c == nil:
		return NewProfile()
	case c == nil:
		return s
	case s == nil:
		return c
	}
	out := NewProfile()
	out.OtherObjects, out.NoLine = s.OtherObjects+c.OtherObjects, s.NoLine+c.NoLine
	var num, den uint64
	for name, cf := range c.Funcs {
		if sf := s.Funcs[name]; sf != nil {
			n, d := anchors(sf, cf)
			num, den = num+n, den+d
		}
	}
	global := 1.0
	if den > 0 {
		global = float64(num) / float64(den)
	}
	if partial {
		for name, sf := range s.Funcs {
			f := sf.scaled(global)
			if cf := c.Funcs[name]; cf != nil {
				shareTargets(f, cf)
			}
			out.Funcs[name] = f
		}
		return out
	}
	for name, sf := range s.Funcs {
		k := global
		if cf := c.Funcs[name]; cf != nil {
			if n, d := anchors(sf, cf); d > 0 {
				k = float64(n) / float64(d)
			}
		}
		out.Funcs[name] = mergeFunc(sf.scaled(k), c.Funcs[name])
	}
	for name, cf := range c.Funcs {
		if out.Funcs[name] == nil {
			out.Funcs[name] = mergeFunc(newFunc(name), cf)
		}
	}
	return out
}

func addTo(sum, p *Profile) *Profile {
	if p == nil {
		return sum
	}
	if sum == nil {
		sum = NewProfile()
	}
	sum.Add(p)
	return sum
}

// anchors returns the calls and the samples of the lines of f that both
// count (the lines that call).
func anchors(s, c *Func) (calls, samples uint64) {
	for l, n := range c.Body {
		if m := s.Body[l]; m > 0 && n > 0 {
			calls, samples = calls+n, samples+m
		}
	}
	return calls, samples
}

// mergeFunc puts the calls of c (nil: none) into s, samples already
// scaled to executions: c's head and call targets, and each line the
// larger of the two counts.
func mergeFunc(s, c *Func) *Func {
	if c == nil {
		return s
	}
	if c.Head > 0 {
		s.Head = c.Head
	}
	for l, n := range c.Body {
		s.Body[l] = max(s.Body[l], n)
	}
	for l, ts := range c.Targets {
		s.Targets[l] = map[string]uint64{}
		for name, n := range ts {
			s.Targets[l][name] = n
		}
	}
	for l, in := range c.Inlined {
		for name, g := range in {
			h := s.inlined(l, name)
			*h = *mergeFunc(h, g)
		}
	}
	return s
}

// shareTargets shares out the call targets of each call site of s (a
// profile of samples, scaled) over the callees c's calls give there, in
// the proportions of the calls, keeping the site's total.
func shareTargets(s, c *Func) {
	for l, cts := range c.Targets {
		ts := s.Targets[l]
		var total, calls uint64
		for _, n := range ts {
			total += n
		}
		for _, n := range cts {
			calls += n
		}
		if total == 0 || calls == 0 {
			continue
		}
		shared := map[string]uint64{}
		for name, n := range cts {
			if m := round(float64(total) * float64(n) / float64(calls)); m > 0 {
				shared[name] = m
			}
		}
		s.Targets[l] = shared
	}
	for l, in := range c.Inlined {
		for name, g := range in {
			if h := s.Inlined[l][name]; h != nil {
				shareTargets(h, g)
			}
		}
	}
}
