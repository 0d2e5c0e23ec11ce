package view

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve listens on addr (see CheckAddr) and serves s until ctx ends. ready
// gets the viewer's URL once it listens (with ?token= when there is a
// token), before any request is answered.
func (s *Server) Serve(ctx context.Context, addr string, ready func(url string)) error {
	if err := CheckAddr(addr, s.token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	if s.token != "" {
		url += "?token=" + s.token
	}
	ready(url)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
