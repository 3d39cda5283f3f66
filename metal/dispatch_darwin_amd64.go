package metal

// dispatch sends dispatchThreadgroups:threadsPerThreadgroup:. On amd64
// the MTLSize structs go on the stack by value; purego's registered
// signature lays them out.
func (c *mtlCB) dispatch(g, t [3]uint32) {
	c.groups = mtlSize{uint64(g[0]), uint64(g[1]), uint64(g[2])}
	c.threads = mtlSize{uint64(t[0]), uint64(t[1]), uint64(t[2])}
	msgDispatch(c.enc, sel.dispatch, c.groups, c.threads)
}
