// Command sumsign makes and checks the release's SHA256SUMS signature
// (the contract is in package update):
//
//	go run ./update/sumsign keygen PRIVATE_KEY_FILE      prints the public key (base64)
//	go run ./update/sumsign sign SHA256SUMS              writes SHA256SUMS.sig; key from $HARK_RELEASE_SIGNING_KEY
//	go run ./update/sumsign verify SHA256SUMS [PUBKEY]   checks SHA256SUMS.sig (default: the key built into Hark)
//
// The private key is the base64 of the 32-byte ed25519 seed.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/harkapp/hark/update"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sumsign:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: sumsign keygen FILE | sign SHA256SUMS | verify SHA256SUMS [PUBKEY]")
	}
	switch args[0] {
	case "keygen":
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		if err := os.WriteFile(args[1], []byte(base64.StdEncoding.EncodeToString(priv.Seed())+"\n"), 0o600); err != nil {
			return err
		}
		fmt.Println(base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)))
		return nil
	case "sign":
		seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(os.Getenv("HARK_RELEASE_SIGNING_KEY")))
		if err != nil || len(seed) != ed25519.SeedSize {
			return errors.New("HARK_RELEASE_SIGNING_KEY is not a base64 ed25519 seed")
		}
		sums, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		return os.WriteFile(args[1]+".sig", update.Sign(ed25519.NewKeyFromSeed(seed), sums), 0o644)
	case "verify":
		pub := update.PublicKey
		if len(args) > 2 {
			pub = args[2]
		}
		key, err := update.ParseKey(pub)
		if err != nil {
			return err
		}
		sums, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		sig, err := os.ReadFile(args[1] + ".sig")
		if err != nil {
			return err
		}
		table, err := update.VerifySums(key, sums, sig)
		if err != nil {
			return err
		}
		fmt.Printf("%s: signature ok, %d files\n", args[1], len(table))
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}
