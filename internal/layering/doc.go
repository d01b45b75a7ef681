// Package layering holds the tests that keep the module's shape: data
// flowing one way (connector -> rebalance -> internal/fetch ->
// internal/streamcore, with internal/zksession and zkutil beneath; stream
// only re-exports the data path's consumer side), an application needing no import but connector (TestOneImport,
// TestREADMESnippetsUseConnectorAlone), and the producer side of streams
// out of an application's reach (TestApplicationCannotForgeMessages),
// the top-level packages exporting what testdata/api lists and nothing
// else (TestExportedSurfaceIsDeliberate), no exported variable but
// sentinel errors (TestNoMutableGlobals), a doc comment on every
// exported name (TestEveryExportedNameHasGodoc) that names no Go file and
// no package under internal/ (TestGodocNamesNoFileOrInternalPackage),
// connector's re-exports by connector's names
// (TestConnectorGodocUsesItsOwnNames) and only pages of docs/ that exist
// (TestGodocPointsToPagesThatExist), and error texts that no package
// under internal/ prefixes with a package's name
// (TestErrorTextsNameNoInternalPackage), and no fence carried in a context
// value: a fenced write takes its zksession.Bound, a fenced Kafka commit
// its fence, as a parameter (TestNoFenceInContextValues).
package layering
