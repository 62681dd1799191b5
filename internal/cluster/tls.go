package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TLSFiles are a node's credentials for the cluster wire: mutual TLS,
// every node presenting a certificate of the cluster's CA and accepting
// only peers that do. The certificate must name the host the node
// advertises (a DNS name or IP SAN): the others check it when they dial.
type TLSFiles struct {
	Cert, Key, CA string
}

// remoteOptions turns the files into the remote's server and dial
// options: the server requires and verifies a client certificate, the
// dialer verifies the server's against the CA (TLS 1.3 only, both ways).
func (f *TLSFiles) remoteOptions() ([]remote.ConfigOption, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, errors.New("cluster: TLS needs a certificate, its key and the cluster's CA")
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("cluster: TLS certificate: %w", err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("cluster: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cluster: TLS CA %s: no PEM certificate in it", f.CA)
	}
	server := &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}
	client := &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
	}
	return []remote.ConfigOption{
		remote.WithServerOptions(grpc.Creds(credentials.NewTLS(server))),
		remote.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(client))),
	}, nil
}
