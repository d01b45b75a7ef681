// Package rebalance is being reduced to what a tool outside the module
// would use; the ZooKeeper member, its assignors and its topic filters
// live under internal/.
package rebalance
