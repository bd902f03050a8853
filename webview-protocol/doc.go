// Package protocol is the contract between ccproxy and webviews.
package protocol
